"""Bot-account PATs: never taken at their word.

A PAT says nothing about whose it is; only GitHub does. Every use of one (``swarm exec``,
``swarm verify``, the dispatcher, the worker) first asks ``GET /user``: the login must not be
the maintainer's and must be the configured bot's. What the PAT may do is read from the
``x-oauth-scopes`` header GitHub sends for classic PATs and held to the worker ceiling. A grant
that cannot be shown to be within the ceiling (a classic PAT with ``repo``, or a fine-grained PAT,
whose grant GitHub does not state) is refused unless the identity says
``accept_broader_grant``; scopes shown to be above it (admin, delete, workflow, package writes)
are refused always.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass

from pydantic import SecretStr

from agents.identity.api import IdentityApi, IdentityLink
from agents.identity.claim import IdentityClaim, TokenScope
from agents.identity.errors import IdentityBlocked
from agents.identity.lease import MintStats, TokenLease
from agents.identity.tokens import BOT_PAT_KINDS, fingerprint, token_kind
from agents.settings.model import ConfigError, IdentityKind
from agents.settings.names import identity_setting
from agents.transport.auth import BotPatAuth

# Classic scopes that read at most what the ceiling reads and write nothing.
WITHIN_CEILING_SCOPES = frozenset(
    {"read:org", "read:user", "user:email", "read:discussion", "read:project", "read:packages"}
)
# Classic scopes shown to be above the ceiling: no setting makes them acceptable.
FORBIDDEN_SCOPE_PREFIXES = ("admin:", "delete_repo", "delete:", "workflow", "write:", "codespace")


@dataclass(frozen=True)
class PatGrant:
    """What GitHub says a PAT is and may do. Safe to print: no credential."""

    login: str
    classic: bool
    # Classic PAT scopes as GitHub listed them; None when GitHub states no grant (fine-grained).
    scopes: tuple[str, ...] | None
    accepted_broader: bool = False

    @property
    def within_ceiling(self) -> bool:
        return self.scopes is not None and all(s in WITHIN_CEILING_SCOPES for s in self.scopes)

    def text(self) -> str:
        """``classic PAT, scopes: repo`` / ``fine-grained PAT, grant not stated by GitHub``."""
        kind = "classic PAT" if self.classic else "fine-grained PAT"
        if self.scopes is None:
            shown = f"{kind}, grant not stated by GitHub"
        else:
            shown = f"{kind}, scopes: {', '.join(self.scopes) or '(none)'}"
        if self.within_ceiling:
            return f"{shown} (within the worker ceiling)"
        return f"{shown} (broader grant accepted)" if self.accepted_broader else shown


async def read_grant(
    api: IdentityApi, credential: SecretStr, claim: IdentityClaim, *, maintainer_login: str
) -> PatGrant:
    """Ask GitHub who the PAT is and what it may do; refuse the maintainer, an account other
    than the one ``claim`` expects, and a grant above (or not shown within) the worker ceiling."""
    identity, expected_login = claim.name, claim.expected_login
    if not maintainer_login:
        raise IdentityBlocked.mismatch(
            "the maintainer login is unknown (set SWARM_MAINTAINER_LOGIN), so the bot PAT cannot "
            "be told apart from the maintainer's"
        )
    reply = await api.user(BotPatAuth.fixed(credential, identity), expected_login)
    login = reply.field("login")
    if not reply.ok or not isinstance(login, str):
        raise IdentityBlocked.mismatch(
            f"GitHub did not say who the token is (GET /user: {reply.github_message()})"
        )
    if login.lower() == maintainer_login.lower():
        raise IdentityBlocked.mismatch(f"login is the maintainer {login}")
    if login.lower() != expected_login.lower():
        raise IdentityBlocked.mismatch(f"login is {login}, expected {expected_login}")
    header = reply.headers.get("x-oauth-scopes")
    classic = token_kind(credential) == "classic_pat"
    # Only a classic PAT's grant is its scopes; a fine-grained PAT's is not in any header.
    scopes = _scopes(header) if classic and header is not None else None
    grant = PatGrant(login, classic, scopes, accepted_broader=claim.accept_broader_grant)
    forbidden = [s for s in scopes or () if s.startswith(FORBIDDEN_SCOPE_PREFIXES)]
    if forbidden:
        raise IdentityBlocked.mismatch(
            f"the bot PAT carries scopes above the worker ceiling: {', '.join(forbidden)}"
        )
    if not grant.within_ceiling and not claim.accept_broader_grant:
        raise IdentityBlocked.mismatch(
            f"the bot PAT's grant is not shown to be within the worker ceiling ({grant.text()}); "
            f"set {identity_setting(identity, 'accept_broader_grant')}=true to accept it"
        )
    return grant


def _scopes(header: str) -> tuple[str, ...]:
    return tuple(s for s in (part.strip() for part in header.split(",")) if s)


class BotPatIdentity:
    """A dedicated bot account's PAT. Nothing is minted or revoked: the PAT is the credential,
    lent only after GitHub confirmed whose it is and what it may do."""

    kind: IdentityKind = "bot_pat"

    def __init__(
        self,
        *,
        name: str,
        token: SecretStr,
        bot_login: str,
        maintainer_login: str,
        link: IdentityLink,
        accept_broader_grant: bool = False,
    ) -> None:
        if token_kind(token) not in BOT_PAT_KINDS:
            raise ConfigError(
                f"{identity_setting(name, 'token_file')}: identity {name!r} is a bot_pat identity "
                "but its token is not a personal access token (ghp_ or github_pat_)"
            )
        self.name = name
        self.stats = MintStats()
        self.accept_broader_grant = accept_broader_grant
        self._token = token
        self._login = bot_login
        self._maintainer = maintainer_login
        self._link = link
        self._api: IdentityApi | None = None
        self._grant: PatGrant | None = None
        self._lock = asyncio.Lock()
        self._lease_ids = itertools.count(1)

    def __repr__(self) -> str:
        return f"BotPatIdentity(name={self.name!r}, login={self._login!r})"

    async def grant(self) -> PatGrant:
        """What GitHub says the PAT is (asked once); raises ``IdentityBlocked`` on a mismatch."""
        async with self._lock:
            if self._grant is None:
                if self._api is None:
                    self._api = self._link.api(self.name)
                claim = IdentityClaim(
                    name=self.name,
                    kind=self.kind,
                    expected_login=self._login,
                    accept_broader_grant=self.accept_broader_grant,
                )
                self._grant = await read_grant(
                    self._api, self._token, claim, maintainer_login=self._maintainer
                )
            return self._grant

    async def bot_login(self) -> str:
        return (await self.grant()).login

    async def acquire(self, scope: TokenScope, *, role: str, holder: str) -> TokenLease:
        scope.check(role)
        login = await self.bot_login()
        self.stats.cache_hits += 1
        return TokenLease(
            lease_id=f"{holder}#{next(self._lease_ids)}",
            holder=holder,
            identity_name=self.name,
            kind="bot_pat",
            expected_login=login,
            scope=scope,
            token=self._token,
            fingerprint=fingerprint(self._token),
            record=None,
            installation_id=None,
            shared=True,
            accept_broader_grant=self.accept_broader_grant,
        )

    async def release(self, lease: TokenLease) -> None:
        """A bot PAT outlives the run; the operator rotates it, swarm never deletes it."""

    async def aclose(self) -> None:
        """Nothing to revoke; only the connection pool, when one was opened."""
        async with self._lock:
            if self._api is not None and self._link.transport is None:
                await self._api.aclose()
            self._api = None
