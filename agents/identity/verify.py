"""Worker-side proof of identity, before the first GitHub call that acts.

Only reads are made here (``POST /graphql`` with a ``viewer`` query, ``GET /user`` - judged by
:func:`agents.identity.pat.read_grant`, as everywhere a PAT is used -,
``GET /installation/repositories``), so a worker that turns out to be the wrong identity has sent
nothing that changes GitHub. Every failure is an :class:`IdentityBlocked` whose text is the line
the parent flow records.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from datetime import datetime
from typing import Protocol

from pydantic import BaseModel, ConfigDict, SecretStr

from agents.identity.api import IdentityApi, IdentityCalls
from agents.identity.app_jwt import utc_now
from agents.identity.claim import IdentityClaim
from agents.identity.errors import IdentityBlocked
from agents.identity.offline import check_offline
from agents.identity.pat import read_grant
from agents.identity.tokens import fingerprint
from agents.settings.model import IdentityKind
from agents.transport import GitHubUnreachable
from agents.transport.auth import InstallationTokenAuth
from agents.transport.client import GitHubTransport

__all__ = ["IdentityVerifier", "OpenedLike", "VerifiedIdentity", "check_offline", "verify_identity"]


class _HasIdentity(Protocol):
    @property
    def identity(self) -> IdentityClaim: ...


class OpenedLike(Protocol):
    """What verification needs from an opened envelope
    (``agents.dispatch.envelope.OpenedEnvelope``)."""

    @property
    def envelope(self) -> _HasIdentity: ...

    @property
    def credential(self) -> SecretStr | None: ...


class VerifiedIdentity(BaseModel):
    """Who the worker proved to be. Safe to log and store: no credential, only its fingerprint."""

    model_config = ConfigDict(frozen=True)

    identity_name: str
    kind: IdentityKind
    login: str
    token_fingerprint: str
    repositories: tuple[str, ...]
    permissions: dict[str, str]
    verified_at: datetime


class IdentityVerifier:
    """Verifies credentials against one API, once per (token, claim): a re-mint verifies again."""

    def __init__(
        self,
        api_url: str,
        maintainer_login: str,
        *,
        timeout: float = 30.0,
        transport: GitHubTransport | None = None,
        calls: IdentityCalls | None = None,
    ) -> None:
        if not maintainer_login:
            raise ValueError("maintainer_login is required to refuse acting as the maintainer")
        self.api_url = api_url.rstrip("/")
        self.maintainer_login = maintainer_login
        # One transport for every identity it verifies: each call carries its own credential and
        # nothing is cached, so no answer can cross identities. ``calls`` puts each in the budget
        # of the identity it claims to be: the one its workers spend next.
        self._api = IdentityApi(
            transport or GitHubTransport(self.api_url, identity="verifier", timeout=timeout), calls
        )
        # ``_lock`` guards the caches between awaits; a key's asyncio lock is held across its
        # verification, so workers sharing a token wait for the first instead of asking again.
        self._lock = threading.Lock()
        self._verified: dict[tuple[str, str], VerifiedIdentity] = {}
        self._key_locks: dict[tuple[str, str], asyncio.Lock] = {}

    def __repr__(self) -> str:
        return f"IdentityVerifier({self.api_url!r})"

    async def aclose(self) -> None:
        await self._api.aclose()

    def forget(self, token_fingerprint: str) -> None:
        with self._lock:
            for key in [k for k in self._verified if k[0] == token_fingerprint]:
                del self._verified[key]
                self._key_locks.pop(key, None)

    async def verify(self, opened: OpenedLike, *, now: datetime | None = None) -> VerifiedIdentity:
        credential = opened.credential
        if credential is None:
            raise IdentityBlocked.no_credential()
        claim = opened.envelope.identity
        moment = now or utc_now()
        key = (fingerprint(credential), _claim_digest(claim))
        with self._lock:
            known = self._verified.get(key)
            key_lock = self._key_locks.setdefault(key, asyncio.Lock())
        if known is not None:
            # Cached answers still honour expiry: the offline checks cost microseconds.
            check_offline(claim, credential, self.maintainer_login, moment)
            return known
        # Workers sharing a token arrive together: the first verifies, the rest wait and reuse.
        async with key_lock:
            with self._lock:
                known = self._verified.get(key)
            if known is not None:
                return known
            verified = await self._verify(claim, credential, moment)
            with self._lock:
                self._verified[key] = verified
            return verified

    # -- the checks, cheapest first ------------------------------------------------------------

    async def _verify(
        self, claim: IdentityClaim, credential: SecretStr, now: datetime
    ) -> VerifiedIdentity:
        permissions = check_offline(claim, credential, self.maintainer_login, now)
        try:
            login, repositories = await self._ask_github(claim, credential)
        except GitHubUnreachable as exc:
            raise IdentityBlocked.mismatch(f"could not verify: {exc}") from None
        return VerifiedIdentity(
            identity_name=claim.name,
            kind=claim.kind,
            login=login,
            token_fingerprint=fingerprint(credential),
            repositories=repositories,
            permissions=permissions,
            verified_at=now,
        )

    async def _ask_github(
        self, claim: IdentityClaim, credential: SecretStr
    ) -> tuple[str, tuple[str, ...]]:
        """The login GitHub knows the credential as, and (Apps) the repositories it reaches."""
        if claim.kind != "app":
            grant = await read_grant(
                self._api, credential, claim, maintainer_login=self.maintainer_login
            )
            return grant.login, claim.repositories
        token = InstallationTokenAuth.fixed(credential, claim.name)
        login = await self._viewer_login(token, claim.expected_login)
        if login.lower() == self.maintainer_login.lower():
            raise IdentityBlocked.mismatch(f"login is the maintainer {login}")
        if login.lower() != claim.expected_login.lower():
            raise IdentityBlocked.mismatch(f"login is {login}, expected {claim.expected_login}")
        return login, await self._reachable_repositories(claim, token)

    async def _viewer_login(self, auth: InstallationTokenAuth, claimed: str) -> str:
        reply = await self._api.viewer(auth, claimed)
        data = reply.field("data")
        viewer = data.get("viewer") if isinstance(data, dict) else None
        login = viewer.get("login") if isinstance(viewer, dict) else None
        if not reply.ok or not isinstance(login, str):
            raise IdentityBlocked.mismatch(
                f"GitHub did not say who the token is (viewer query: {reply.github_message()})"
            )
        return login

    async def _reachable_repositories(
        self, claim: IdentityClaim, auth: InstallationTokenAuth
    ) -> tuple[str, ...]:
        found: list[str] = []
        page = 1
        while True:
            reply = await self._api.installation_repositories(auth, page, claim.expected_login)
            repos = reply.field("repositories")
            if not reply.ok or not isinstance(repos, list):
                raise IdentityBlocked.mismatch(
                    "GitHub did not list the token's repositories "
                    f"(GET /installation/repositories: {reply.github_message()})"
                )
            found.extend(str(r.get("full_name")) for r in repos if isinstance(r, dict))
            if len(repos) < 100 or page >= 10:
                break
            page += 1
        allowed = {repo.lower() for repo in claim.repositories}
        outside = sorted(repo for repo in found if repo.lower() not in allowed)
        if outside:
            raise IdentityBlocked.mismatch(
                f"the token reaches repositories outside the envelope: {', '.join(outside)}"
            )
        return tuple(sorted(found))


def _claim_digest(claim: IdentityClaim) -> str:
    text = json.dumps(claim.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


async def verify_identity(
    api_url: str,
    opened: OpenedLike,
    maintainer_login: str,
    *,
    now: datetime | None = None,
    timeout: float = 30.0,
    transport: GitHubTransport | None = None,
) -> VerifiedIdentity:
    """One-off verification; workers that verify repeatedly keep an :class:`IdentityVerifier`."""
    verifier = IdentityVerifier(api_url, maintainer_login, timeout=timeout, transport=transport)
    try:
        return await verifier.verify(opened, now=now)
    finally:
        if transport is None:
            await verifier.aclose()
