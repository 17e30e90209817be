"""Settings: one pydantic-settings model, prefix ``SWARM_``, built once at each entry point.

Secrets come from the environment or from files in the git-ignored ``secrets/`` folder
(``secrets.example/`` mirrors its file names with fake values). A configuration error names the
setting and what is wrong with it and never echoes a secret value.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    JsonValue,
    SecretStr,
    ValidationError,
    field_validator,
)
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from pydantic_settings.exceptions import SettingsError

from agents.github.writes import WriteCaps
from agents.llm.models import (
    MODEL_SETTING,
    MODELS_SETTING,
    ModelRegistry,
    ModelRegistryError,
    UnknownModel,
)
from agents.ratelimit.github.limits import ThrottleLimits
from agents.settings.checks import repo_problem, sealing_key_problem, store_url_problem
from agents.settings.identity import ConfigError as ConfigError
from agents.settings.identity import IdentityKind as IdentityKind
from agents.settings.identity import IdentitySettings as IdentitySettings
from agents.settings.names import identity_setting, validation_problems
from agents.settings.paths import DEFAULT_DATA_DIR
from agents.settings.secret_files import secret_file_defaults

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_IDENTITY = "default"
# The offline model (sandbox/model): a model id no registry holds, and the default.
SCRIPTED_MODEL = "scripted"
ENV_PREFIX = "SWARM_"
FLAT_APP_SETTINGS = ("SWARM_APP_ID", "SWARM_APP_PRIVATE_KEY_FILE", "SWARM_APP_INSTALLATION_ID")


class Settings(BaseSettings):
    """Everything swarm reads from its environment. Built once per entry point (CLI, flow)."""

    model_config = SettingsConfigDict(
        env_prefix="SWARM_",
        env_nested_delimiter="__",
        extra="ignore",
        frozen=True,
    )

    github_api_url: str = DEFAULT_API_URL
    # The default identity, from the flat SWARM_APP_* settings.
    app_id: int | None = Field(default=None, gt=0)
    app_private_key_file: Path | None = None
    app_private_key: SecretStr | None = None
    app_installation_id: int | None = Field(default=None, gt=0)
    app_bot_login: str | None = None
    # Further identities by name, e.g. SWARM_IDENTITIES__TRIAGE__APP_ID=...
    identities: dict[str, IdentitySettings] = Field(default_factory=dict)

    maintainer_login: str | None = None
    store_url: str | None = None
    data_dir: Path = DEFAULT_DATA_DIR
    # Envelope sealing key (urlsafe base64, 32 bytes). Generated per run when not configured.
    sealing_key: SecretStr | None = None

    roles_dir: Path = Field(default_factory=lambda: _default_roles_dir())
    model: str = SCRIPTED_MODEL
    # Model registry overrides and additions, JSON: {"<model id>": {"context_window": ...}}.
    models: dict[str, dict[str, JsonValue]] = Field(default_factory=dict)
    anthropic_api_key: SecretStr | None = Field(default=None, validation_alias="ANTHROPIC_API_KEY")
    anthropic_base_url: str | None = Field(default=None, validation_alias="ANTHROPIC_BASE_URL")
    # The LLM client never reads HTTPS_PROXY and friends; a proxy is used only when set here.
    llm_proxy: str | None = None

    # Comma-separated OWNER/NAME list in the environment.
    repos: Annotated[list[str], NoDecode] = Field(default_factory=list)
    max_workers: int = Field(default=8, ge=1, le=256)
    # Mint one token per worker instead of sharing one per distinct scope.
    per_worker_tokens: bool = False
    # "auto": shared through the store when the store is a server database (several processes,
    # several machines share it), in memory for a SQLite file (one machine, usually one process).
    throttle_backend: Literal["auto", "memory", "store"] = "auto"
    # The numbers each identity's throttle keeps to: GitHub's published ones unless a GitHub
    # Enterprise Server's administrators set others (SWARM_GITHUB_LIMITS__REST_POINTS_PER_MINUTE).
    github_limits: ThrottleLimits = Field(default_factory=ThrottleLimits)
    # Per-run caps on the bot's writes, per operation and pull request
    # (SWARM_WRITE_CAPS__COMMENTS_PER_PR): a runaway or hijacked worker cannot spam.
    write_caps: WriteCaps = Field(default_factory=WriteCaps)
    # Hidden runtime records (events, call logs, snapshots) older than this are pruned by
    # `swarm store prune`; user-visible memory is never pruned.
    retention_days: int = Field(default=30, ge=1)
    http_timeout_seconds: float = Field(default=30.0, gt=0)
    # Learnings a maintainer (admin or maintain access) teaches by replying to a review
    # comment are accepted at once instead of waiting in `swarm memory review`.
    memory_auto_accept: bool = False
    # Resolve the threads of fixed findings with a separate token holding contents:write,
    # minted for that one mutation and repository and revoked at once (GitHub gates
    # resolveReviewThread on it); off: the bot replies "fixed at <sha>" and leaves them open.
    resolve_threads: bool = False
    # How often a polling run reads a repository's review feedback (replies, reactions, resolved
    # threads) for learnings: at most once in this many seconds per bot and repository. GitHub
    # sends no webhook for a reaction, and a learning waits for a maintainer anyway; 0 reads it
    # on every run.
    learning_poll_interval_s: float = Field(default=900.0, ge=0, le=7 * 24 * 3600)
    # Call overlays: path glob -> role id, as JSON ({"src/auth/**": "security-reviewer"}).
    path_overlays: dict[str, str] = Field(default_factory=dict)
    # `swarm webhook serve`: the App's webhook secret, the body cap, where the work goes.
    webhook_secret_file: Path | None = None
    webhook_max_body_bytes: int = Field(default=1024 * 1024, ge=1024, le=25 * 1024 * 1024)
    webhook_deployment: str | None = None
    webhook_concurrency: int = Field(default=2, ge=1, le=64)
    # Seconds between two passes over the App's delivery log for deliveries GitHub failed to
    # make (the receiver down): each is asked for again; 0 turns it off (docs/events.md).
    webhook_recovery_interval_s: float = Field(default=300.0, ge=0, le=86400)
    # What a sender may hold of the receiver before its request is in
    # (flows/webhook/connections.py): the request head within the header timeout of the
    # connection opening (or of the first byte of a next request on a kept-alive one), the body
    # within the body timeout of the head, a kept-alive connection closed after the idle
    # timeout, and at most so many connections open.
    webhook_header_timeout_s: float = Field(default=5.0, gt=0, le=300)
    webhook_body_timeout_s: float = Field(default=10.0, gt=0, le=3600)
    webhook_idle_timeout_s: float = Field(default=5.0, gt=0, le=3600)
    webhook_max_connections: int = Field(default=128, ge=1, le=65536)
    # Lowest level of the project's log records shipped to the Prefect run and task-run logs.
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"

    @field_validator("log_level", mode="before")
    @classmethod
    def _level_case(cls, value: object) -> object:
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("github_api_url")
    @classmethod
    def _url_shape(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/")

    @field_validator("repos", mode="before")
    @classmethod
    def _split_repos(cls, value: object) -> object:
        if isinstance(value, str) and not value.strip().startswith("["):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("repos")
    @classmethod
    def _repo_shape(cls, value: list[str]) -> list[str]:
        for repo in value:
            problem = repo_problem(repo)
            if problem:
                raise ValueError(problem)
        return value

    @field_validator("models")
    @classmethod
    def _model_entries(
        cls, value: dict[str, dict[str, JsonValue]]
    ) -> dict[str, dict[str, JsonValue]]:
        try:
            ModelRegistry(value)
        except ModelRegistryError as exc:
            raise ValueError(str(exc).removeprefix(f"{MODELS_SETTING}: ")) from None
        return value

    def model_registry(self) -> ModelRegistry:
        """The built-in model registry with ``SWARM_MODELS`` applied."""
        return ModelRegistry(self.models)

    def model_problem(self, model_id: str | None = None, name: str = MODEL_SETTING) -> str | None:
        """What is wrong with ``model_id`` (default: ``SWARM_MODEL``) as a model to run, named
        as ``name`` (the setting, a flag or a role file that chose it); None when it is known."""
        chosen = self.model if model_id is None else model_id
        if chosen == SCRIPTED_MODEL:
            return None
        try:
            self.model_registry().spec(chosen)
        except UnknownModel as exc:
            return name + str(exc).removeprefix(MODEL_SETTING)
        return None

    @field_validator("sealing_key")
    @classmethod
    def _sealing_key_shape(cls, value: SecretStr | None) -> SecretStr | None:
        problem = sealing_key_problem(value.get_secret_value()) if value is not None else None
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("store_url")
    @classmethod
    def _store_url_shape(cls, value: str | None) -> str | None:
        problem = store_url_problem(value) if value is not None else None
        if problem:
            raise ValueError(problem)
        return value.strip() if value is not None else None

    def default_identity_missing(self) -> list[str]:
        """The flat ``SWARM_APP_*`` settings the default identity still needs, if any is set."""
        key = self.app_private_key_file or self.app_private_key
        values = (self.app_id, key, self.app_installation_id)
        return [
            name for name, value in zip(FLAT_APP_SETTINGS, values, strict=True) if value is None
        ]

    def configured_anything(self) -> bool:
        """Whether any identity or the maintainer login is set (else: a first start)."""
        flat_given = len(self.default_identity_missing()) < len(FLAT_APP_SETTINGS)
        return bool(self.identities or self.maintainer_login) or flat_given

    # -- derived views -------------------------------------------------------------------------

    def all_identities(self) -> dict[str, IdentitySettings]:
        """Named identities, with the flat SWARM_APP_* settings as the ``default`` one."""
        found = {name.lower(): ident for name, ident in self.identities.items()}
        if not self.default_identity_missing() and DEFAULT_IDENTITY not in found:
            found[DEFAULT_IDENTITY] = IdentitySettings(
                kind="app",
                app_id=self.app_id,
                private_key_file=self.app_private_key_file,
                private_key=self.app_private_key,
                installation_id=self.app_installation_id,
                bot_login=self.app_bot_login,
            )
        return found

    def identity(self, name: str) -> IdentitySettings:
        found = self.all_identities()
        try:
            return found[name.lower()]
        except KeyError:
            known = ", ".join(sorted(found)) or "none configured"
            hint = (
                "set SWARM_APP_ID, SWARM_APP_PRIVATE_KEY_FILE and SWARM_APP_INSTALLATION_ID"
                if name.lower() == DEFAULT_IDENTITY
                else f"set {identity_setting(name, 'app_id')} and friends"
            )
            raise ConfigError(
                f"identity {name!r} is not configured (known: {known}); {hint}"
            ) from None

    def require_maintainer_login(self) -> str:
        if not self.maintainer_login:
            raise ConfigError(
                "SWARM_MAINTAINER_LOGIN is not set: swarm needs the maintainer's login to refuse "
                "ever acting as them"
            )
        return self.maintainer_login

    def shared_throttle(self) -> bool:
        """Whether each identity's buckets live in the store, shared by every process."""
        if self.throttle_backend == "auto":
            return not self.resolved_store_url().startswith("sqlite")
        return self.throttle_backend == "store"

    def resolved_store_url(self) -> str:
        if self.store_url:
            return self.store_url
        return f"sqlite:///{(self.data_dir / 'swarm.db').resolve()}"


def _default_roles_dir() -> Path:
    """``roles/`` of the working directory when there is one, else the roles shipped with swarm,
    so `swarm run` works from any directory."""
    here = Path("roles")
    return here if here.is_dir() else Path(__file__).resolve().parents[2] / "roles"


def load_settings(
    *,
    needs: Callable[[Settings], list[str]] | None = None,
    checks: Callable[[Settings], list[str]] | None = None,
    **overrides: Any,
) -> Settings:
    """Build Settings once at an entry point; raise one ConfigError naming every problem:
    unknown SWARM_* variables, invalid values (never a value itself), a model no registry knows,
    settings that are missing for the command (``needs`` names them, e.g. the maintainer login
    for a run) and what else the command finds wrong with them (``checks``: one line each, such
    as a flag naming an unknown model), so a person fixes everything in one round."""
    from agents.settings.names import (
        missing_problem,
        problems_message,
        setting_names,
        unknown_variables,
    )

    problems = unknown_variables(os.environ, setting_names(Settings, ENV_PREFIX), ENV_PREFIX)
    try:
        settings = Settings(**{**secret_file_defaults(), **overrides})
    except ValidationError as exc:
        # A misspelled nested name is also an "extra input" to pydantic: report it once.
        unknown = {line.split(" ", 1)[0].upper() for line in problems}
        found = validation_problems(exc, ENV_PREFIX)
        problems += [line for line in found if line.split(":", 1)[0] not in unknown]
    except SettingsError as exc:
        # pydantic-settings names the field but not the value here; keep only that first line.
        problems.append(str(exc).splitlines()[0])
    else:
        first_start = not settings.configured_anything()
        # A partly configured default identity is an error for every command.
        partial = settings.default_identity_missing()
        missing = partial if len(partial) < len(FLAT_APP_SETTINGS) else []
        missing = list(dict.fromkeys([*missing, *(needs(settings) if needs else [])]))
        if missing:
            problems.insert(0, missing_problem(missing, first_start=first_start))
        problems += [
            p for p in [settings.model_problem(), *(checks(settings) if checks else [])] if p
        ]
        if not problems:
            from agents.settings.secret_values import register_configured_secrets

            register_configured_secrets(settings)
            return settings
    raise ConfigError(problems_message(problems))
