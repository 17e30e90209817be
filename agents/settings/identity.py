"""One GitHub identity's settings (an App installation or a bot account's PAT) and the error
every entry point reports for a missing or invalid setting.

Kept apart from :mod:`agents.settings.model` so the identity layer and the settings model share one
definition without the settings model growing past what one reader holds in mind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from agents.errors import SwarmError
from agents.permissions import DEFAULT_CEILING, CeilingName
from agents.private_files import read_private_text

IdentityKind = Literal["app", "bot_pat"]


class ConfigError(SwarmError):
    """A setting is missing or invalid. The message names the setting, never its value."""


class IdentitySettings(BaseModel):
    """One GitHub identity workers may act as: a GitHub App installation or a bot account's PAT."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: IdentityKind = "app"
    app_id: int | None = Field(default=None, gt=0)
    private_key_file: Path | None = None
    private_key: SecretStr | None = None
    installation_id: int | None = Field(default=None, gt=0)
    # Expected login; for Apps it defaults to "<slug>[bot]" read from GET /app.
    bot_login: str | None = None
    token_file: Path | None = None
    token: SecretStr | None = None
    # A bot PAT whose grant GitHub does not show to be within the worker ceiling (fine-grained,
    # or classic with `repo`) is refused unless this says the operator accepts it.
    accept_broader_grant: bool = False
    # Which ceiling (agents.permissions.CEILINGS) bounds every token of this identity: a
    # reviewing identity never holds contents:write; only the writer's own App does.
    ceiling: CeilingName = DEFAULT_CEILING

    @model_validator(mode="after")
    def _complete_for_kind(self) -> IdentitySettings:
        missing: list[str] = []
        if self.kind == "app":
            if self.app_id is None:
                missing.append("app_id")
            if self.private_key_file is None and self.private_key is None:
                missing.append("private_key_file")
            if self.installation_id is None:
                missing.append("installation_id")
        else:
            if self.token_file is None and self.token is None:
                missing.append("token_file")
            if not self.bot_login:
                missing.append("bot_login")
        if self.kind == "app" and self.accept_broader_grant:
            raise ValueError(
                "accept_broader_grant is for bot_pat identities; an App token's grant is "
                "checked at every mint"
            )
        if self.kind != "app" and self.ceiling != DEFAULT_CEILING:
            raise ValueError(
                f"ceiling {self.ceiling!r} is for App identities; a bot account's PAT cannot be "
                "scoped down per token"
            )
        if missing:
            raise ValueError(f"a {self.kind!r} identity needs {', '.join(missing)}")
        return self

    def private_key_pem(self) -> SecretStr:
        """The App private key, read from the environment value or the key file."""
        if self.private_key is not None:
            return self.private_key
        assert self.private_key_file is not None
        return SecretStr(read_secret_file(self.private_key_file, "private_key_file"))

    def bot_token(self) -> SecretStr:
        """The bot account's PAT, for ``kind == "bot_pat"`` identities."""
        if self.token is not None:
            return self.token
        assert self.token_file is not None
        return SecretStr(read_secret_file(self.token_file, "token_file").strip())


def read_secret_file(path: Path, field: str) -> str:
    try:
        return read_private_text(path, f"{field}:")
    except FileNotFoundError:
        raise ConfigError(f"{field}: file {path} does not exist") from None
    except OSError as exc:
        raise ConfigError(f"{field}: cannot read {path} ({exc.strerror})") from None
