"""Where a worker's credential comes from: an App installation (minted) or a bot account's PAT.

Both kinds hand out :class:`TokenLease` objects through the same three calls, so the dispatcher
does not care which one an identity is. A maintainer's PAT is never an identity: an identity
whose login is the maintainer's is refused here, a PAT that GitHub says is the maintainer's is
refused before it is lent (:mod:`agents.identity.pat`), again at sealing, and again by the worker.
"""

from __future__ import annotations

from typing import Protocol, Unpack

from agents.identity.api import IdentityLink
from agents.identity.claim import TokenScope
from agents.identity.lease import MintStats, TokenLease
from agents.identity.minter import InstallationMinter, MinterOptions
from agents.identity.pat import BotPatIdentity
from agents.settings.model import ConfigError, IdentityKind, IdentitySettings, Settings
from agents.settings.names import identity_setting

__all__ = ["BotPatIdentity", "IdentitySource", "open_identity"]


class IdentitySource(Protocol):
    name: str
    kind: IdentityKind
    stats: MintStats

    async def bot_login(self) -> str: ...

    async def acquire(self, scope: TokenScope, *, role: str, holder: str) -> TokenLease: ...

    async def release(self, lease: TokenLease) -> None: ...

    async def aclose(self) -> None: ...


def open_identity(
    settings: Settings, name: str, **options: Unpack[MinterOptions]
) -> IdentitySource:
    """The credential source for identity ``name``, refusing one that is the maintainer."""
    ident: IdentitySettings = settings.identity(name)
    maintainer = (settings.maintainer_login or "").lower()
    if ident.bot_login and maintainer and ident.bot_login.lower() == maintainer:
        raise ConfigError(
            f"{identity_setting(name, 'bot_login')}: identity {name!r} is the maintainer's login; "
            "swarm never acts as the maintainer"
        )
    if ident.kind == "bot_pat":
        assert ident.bot_login is not None
        return BotPatIdentity(
            name=name,
            token=ident.bot_token(),
            bot_login=ident.bot_login,
            maintainer_login=settings.maintainer_login or "",
            link=IdentityLink(
                settings.github_api_url,
                timeout=options.get("timeout", settings.http_timeout_seconds),
                transport=options.get("transport"),
                calls=options.get("calls"),
            ),
            accept_broader_grant=ident.accept_broader_grant,
        )
    defaults = MinterOptions(
        timeout=settings.http_timeout_seconds, per_worker=settings.per_worker_tokens
    )
    return InstallationMinter.from_identity(
        ident, name, api_url=settings.github_api_url, **(defaults | options)
    )
