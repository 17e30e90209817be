"""Where a worker's credential comes from: an App installation (minted) or a bot account's PAT.

Both kinds hand out :class:`TokenLease` objects through the same three calls, so the dispatcher
does not care which one an identity is. A maintainer's PAT is never an identity: an identity
whose login is the maintainer's is refused here, again at sealing, and again by the worker.
"""

from __future__ import annotations

import itertools
from typing import Protocol, Unpack

from pydantic import SecretStr

from agents.config import ConfigError, IdentityKind, IdentitySettings, Settings
from agents.identity.claim import TokenScope
from agents.identity.lease import MintStats, TokenLease
from agents.identity.minter import InstallationMinter, MinterOptions
from agents.identity.tokens import BOT_PAT_KINDS, fingerprint, token_kind


class IdentitySource(Protocol):
    name: str
    kind: IdentityKind
    stats: MintStats

    def bot_login(self) -> str: ...

    def acquire(self, scope: TokenScope, *, role: str, holder: str) -> TokenLease: ...

    def release(self, lease: TokenLease) -> None: ...

    def close(self) -> None: ...


def _setting(name: str, field: str) -> str:
    return f"SWARM_IDENTITIES__{name.upper()}__{field.upper()}"


class BotPatIdentity:
    """A dedicated bot account's PAT. Nothing is minted or revoked: the PAT is the credential."""

    kind: IdentityKind = "bot_pat"

    def __init__(self, *, name: str, token: SecretStr, bot_login: str) -> None:
        kind = token_kind(token)
        if kind not in BOT_PAT_KINDS:
            raise ConfigError(
                f"{_setting(name, 'token_file')}: identity {name!r} is a bot_pat identity but its "
                "token is not a personal access token (ghp_ or github_pat_)"
            )
        self.name = name
        self.stats = MintStats()
        self._token = token
        self._login = bot_login
        self._lease_ids = itertools.count(1)

    def __repr__(self) -> str:
        return f"BotPatIdentity(name={self.name!r}, login={self._login!r})"

    def bot_login(self) -> str:
        return self._login

    def acquire(self, scope: TokenScope, *, role: str, holder: str) -> TokenLease:
        scope.check(role)
        self.stats.cache_hits += 1
        return TokenLease(
            lease_id=f"{holder}#{next(self._lease_ids)}",
            holder=holder,
            identity_name=self.name,
            kind="bot_pat",
            expected_login=self._login,
            scope=scope,
            token=self._token,
            fingerprint=fingerprint(self._token),
            record=None,
            installation_id=None,
            shared=True,
        )

    def release(self, lease: TokenLease) -> None:
        """A bot PAT outlives the run; the operator rotates it, swarm never deletes it."""

    def close(self) -> None:
        """Nothing to revoke."""


def open_identity(
    settings: Settings, name: str, **options: Unpack[MinterOptions]
) -> IdentitySource:
    """The credential source for identity ``name``, refusing one that is the maintainer."""
    ident: IdentitySettings = settings.identity(name)
    maintainer = (settings.maintainer_login or "").lower()
    if ident.bot_login and maintainer and ident.bot_login.lower() == maintainer:
        raise ConfigError(
            f"{_setting(name, 'bot_login')}: identity {name!r} is the maintainer's login; "
            "swarm never acts as the maintainer"
        )
    if ident.kind == "bot_pat":
        assert ident.bot_login is not None
        return BotPatIdentity(name=name, token=ident.bot_token(), bot_login=ident.bot_login)
    defaults = MinterOptions(
        timeout=settings.http_timeout_seconds, per_worker=settings.per_worker_tokens
    )
    return InstallationMinter.from_identity(
        ident, name, api_url=settings.github_api_url, **(defaults | options)
    )
