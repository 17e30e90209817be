"""Worker-side proof of identity, before the first GitHub call that acts.

Only reads are made here (``POST /graphql`` with a ``viewer`` query, ``GET /user``,
``GET /installation/repositories``), so a worker that turns out to be the wrong identity has sent
nothing that changes GitHub. Every failure is an :class:`IdentityBlocked` whose text is the line
the parent flow records.
"""

from __future__ import annotations

import hashlib
import json
import threading
from datetime import datetime
from typing import Protocol

import httpx
from pydantic import BaseModel, ConfigDict, SecretStr

from agents.config import IdentityKind
from agents.identity.app_jwt import utc_now
from agents.identity.claim import IMPLICIT_GRANTS, IdentityClaim
from agents.identity.errors import IdentityBlocked
from agents.identity.http import (
    ApiReply,
    GitHubUnreachable,
    IdentityHttp,
    graphql_url,
    token_auth,
)
from agents.identity.tokens import BOT_PAT_KINDS, fingerprint, token_kind, token_prefix
from agents.permissions import check_permissions, within

VIEWER_QUERY = "query { viewer { login } }"
# Classic PAT scopes no worker may hold (the ceiling has no admin, delete, workflow or packages).
_FORBIDDEN_SCOPE_PREFIXES = ("admin:", "delete_repo", "delete:", "workflow", "write:packages")


class _HasIdentity(Protocol):
    @property
    def identity(self) -> IdentityClaim: ...


class OpenedLike(Protocol):
    """What verification needs from an opened envelope (``agents.envelope.OpenedEnvelope``)."""

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
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not maintainer_login:
            raise ValueError("maintainer_login is required to refuse acting as the maintainer")
        self.api_url = api_url.rstrip("/")
        self.maintainer_login = maintainer_login
        self._http = IdentityHttp(self.api_url, timeout=timeout, transport=transport)
        self._lock = threading.Lock()
        self._verified: dict[tuple[str, str], VerifiedIdentity] = {}
        self._key_locks: dict[tuple[str, str], threading.Lock] = {}

    def __repr__(self) -> str:
        return f"IdentityVerifier({self.api_url!r})"

    def close(self) -> None:
        self._http.close()

    def forget(self, token_fingerprint: str) -> None:
        with self._lock:
            for key in [k for k in self._verified if k[0] == token_fingerprint]:
                del self._verified[key]
                self._key_locks.pop(key, None)

    def verify(self, opened: OpenedLike, *, now: datetime | None = None) -> VerifiedIdentity:
        credential = opened.credential
        if credential is None:
            raise IdentityBlocked.no_credential()
        claim = opened.envelope.identity
        moment = now or utc_now()
        key = (fingerprint(credential), _claim_digest(claim))
        with self._lock:
            known = self._verified.get(key)
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        if known is not None:
            # Cached answers still honour expiry: the offline checks cost microseconds.
            check_offline(claim, credential, self.maintainer_login, moment)
            return known
        # Workers sharing a token arrive together: the first verifies, the rest wait and reuse.
        with key_lock:
            with self._lock:
                known = self._verified.get(key)
            if known is not None:
                return known
            verified = self._verify(claim, credential, moment)
            with self._lock:
                self._verified[key] = verified
            return verified

    # -- the checks, cheapest first ------------------------------------------------------------

    def _verify(
        self, claim: IdentityClaim, credential: SecretStr, now: datetime
    ) -> VerifiedIdentity:
        maintainer = self.maintainer_login.lower()
        permissions = check_offline(claim, credential, self.maintainer_login, now)
        if claim.kind == "app":
            login = self._viewer_login(credential)
        else:
            login = self._user_login(credential)
        if login.lower() == maintainer:
            raise IdentityBlocked.mismatch(f"login is the maintainer {login}")
        if login.lower() != claim.expected_login.lower():
            raise IdentityBlocked.mismatch(f"login is {login}, expected {claim.expected_login}")
        repositories = (
            self._reachable_repositories(claim, credential)
            if claim.kind == "app"
            else claim.repositories
        )
        return VerifiedIdentity(
            identity_name=claim.name,
            kind=claim.kind,
            login=login,
            token_fingerprint=fingerprint(credential),
            repositories=repositories,
            permissions=permissions,
            verified_at=now,
        )

    def _viewer_login(self, credential: SecretStr) -> str:
        reply = self._read(
            "POST", graphql_url(self.api_url), credential, json={"query": VIEWER_QUERY}
        )
        body = reply.body
        data = body.get("data") if isinstance(body, dict) else None
        viewer = data.get("viewer") if isinstance(data, dict) else None
        login = viewer.get("login") if isinstance(viewer, dict) else None
        if not reply.ok or not isinstance(login, str):
            raise IdentityBlocked.mismatch(
                f"GitHub did not say who the token is (viewer query: {reply.github_message()})"
            )
        return login

    def _user_login(self, credential: SecretStr) -> str:
        reply = self._read("GET", "/user", credential)
        login = reply.body.get("login") if isinstance(reply.body, dict) else None
        if not reply.ok or not isinstance(login, str):
            raise IdentityBlocked.mismatch(
                f"GitHub did not say who the token is (GET /user: {reply.github_message()})"
            )
        scopes = [s.strip() for s in reply.headers.get("x-oauth-scopes", "").split(",")]
        too_broad = [s for s in scopes if s.startswith(_FORBIDDEN_SCOPE_PREFIXES)]
        if too_broad:
            raise IdentityBlocked.mismatch(
                f"the bot PAT carries scopes above the worker ceiling: {', '.join(too_broad)}"
            )
        return login

    def _reachable_repositories(
        self, claim: IdentityClaim, credential: SecretStr
    ) -> tuple[str, ...]:
        found: list[str] = []
        page = 1
        while True:
            reply = self._read(
                "GET", f"/installation/repositories?per_page=100&page={page}", credential
            )
            repos = reply.body.get("repositories") if isinstance(reply.body, dict) else None
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

    def _read(
        self, method: str, url: str, credential: SecretStr, json: object | None = None
    ) -> ApiReply:
        try:
            return self._http.call(method, url, authorization=token_auth(credential), json=json)
        except GitHubUnreachable as exc:
            raise IdentityBlocked.mismatch(f"could not verify: {exc}") from None


def check_offline(
    claim: IdentityClaim, credential: SecretStr, maintainer_login: str, now: datetime
) -> dict[str, str]:
    """Everything provable without GitHub: not the maintainer, right token kind, within the
    ceiling, and (Apps) the credential is the minted token and its grant fits the envelope.
    Returns the permissions the token is known to hold."""
    if claim.expected_login.lower() == maintainer_login.lower():
        raise IdentityBlocked.mismatch(
            f"the envelope names the maintainer {claim.expected_login}; swarm never acts "
            "as the maintainer"
        )
    _check_kind(claim, credential)
    ceiling = check_permissions(claim.permissions, f"identity {claim.name!r}")
    if ceiling:
        raise IdentityBlocked.mismatch("; ".join(ceiling))
    if claim.kind == "app":
        return _check_mint_record(claim, credential, now)
    return dict(claim.permissions)


def _check_kind(claim: IdentityClaim, credential: SecretStr) -> None:
    kind = token_kind(credential)
    if claim.kind == "app" and kind != "installation":
        raise IdentityBlocked.mismatch(
            f"identity {claim.name!r} is an App but the credential is a {kind.replace('_', ' ')} "
            f"token ({token_prefix(kind)}), not an installation token (ghs_)"
        )
    if claim.kind == "bot_pat" and kind not in BOT_PAT_KINDS:
        raise IdentityBlocked.mismatch(
            f"identity {claim.name!r} is a bot account but the credential is a "
            f"{kind.replace('_', ' ')} token ({token_prefix(kind)}), not a PAT "
            "(ghp_ or github_pat_)"
        )


def _check_mint_record(
    claim: IdentityClaim, credential: SecretStr, now: datetime
) -> dict[str, str]:
    """The dispatcher signed what GitHub granted; hold the credential and the grant to it."""
    record = claim.mint
    if record is None:
        raise IdentityBlocked.mismatch(f"identity {claim.name!r} has no mint record")
    if record.token_fingerprint != fingerprint(credential):
        raise IdentityBlocked.mismatch(
            f"the credential is not the token minted for this envelope "
            f"({fingerprint(credential)} != {record.token_fingerprint})"
        )
    if claim.installation_id is not None and record.installation_id != claim.installation_id:
        raise IdentityBlocked.mismatch(
            f"the token belongs to installation {record.installation_id}, "
            f"expected {claim.installation_id}"
        )
    if now >= record.expires_at:
        raise IdentityBlocked.mismatch(f"the token expired at {record.expires_at.isoformat()}")
    excess = [
        f"{key}:{level}"
        for key, level in record.permissions.items()
        if not within(
            {key: claim.permissions.get(key) or IMPLICIT_GRANTS.get(key, "none")}, {key: level}
        )
    ]
    if excess:
        raise IdentityBlocked.mismatch(
            f"granted permissions exceed the envelope: {', '.join(excess)}"
        )
    allowed = {repo.lower() for repo in claim.repositories}
    outside = [repo for repo in record.repositories if repo.lower() not in allowed]
    if outside:
        raise IdentityBlocked.mismatch(
            f"granted repositories exceed the envelope: {', '.join(outside)}"
        )
    return dict(record.permissions)


def _claim_digest(claim: IdentityClaim) -> str:
    text = json.dumps(claim.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def verify_identity(
    api_url: str,
    opened: OpenedLike,
    maintainer_login: str,
    *,
    now: datetime | None = None,
    timeout: float = 30.0,
    transport: httpx.BaseTransport | None = None,
) -> VerifiedIdentity:
    """One-off verification; workers that verify repeatedly keep an :class:`IdentityVerifier`."""
    verifier = IdentityVerifier(api_url, maintainer_login, timeout=timeout, transport=transport)
    try:
        return verifier.verify(opened, now=now)
    finally:
        if transport is None:
            verifier.close()
