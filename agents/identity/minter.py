"""Installation tokens for one GitHub App identity: down-scoped, checked, cached, revoked.

Sharing policy: workers asking for the same (API URL, App, installation, permissions,
repositories) at the same time share one token until ``refresh_margin`` before it expires. A
token is revoked as soon as its last holder releases it (a later worker of the same scope mints
afresh), and every token still alive is revoked when the run ends
(:meth:`InstallationMinter.close`). ``per_worker=True`` gives every worker its own token.

A mint answer is trusted only once it is fully read and checked: whatever fails after GitHub
handed out a token (a malformed expiry, an unstated or broader grant, a bug of ours) revokes it
before the failure is raised.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TypedDict, TypeVar, Unpack

from pydantic import SecretStr

from agents.identity.api import IdentityCalls, IdentityLink
from agents.identity.app_jwt import AppJwtSigner, Clock, read_private_key, utc_now
from agents.identity.claim import MintRecord, TokenScope
from agents.identity.errors import MintRefused
from agents.identity.grant import excess_grant, permission_text, record_of, token_of
from agents.identity.lease import MintStats, TokenLease
from agents.identity.tokens import fingerprint
from agents.permissions import DEFAULT_CEILING, ceiling_of, check_permissions
from agents.settings.model import DEFAULT_IDENTITY, IdentityKind, IdentitySettings
from agents.transport.auth import AppJwtAuth, InstallationTokenAuth
from agents.transport.client import GitHubTransport
from agents.transport.reply import Reply

# What a field of GET /app is read as (its events a list, its permissions a dict).
_F = TypeVar("_F")

log = logging.getLogger(__name__)

DEFAULT_REFRESH_MARGIN = timedelta(minutes=5)
# At most this many repositories are asked about one by one to find which one GitHub refuses.
_PROBES = 20


class MinterOptions(TypedDict, total=False):
    """What a caller may tune beyond the identity's settings (tests, benchmarks, the CLI)."""

    per_worker: bool
    refresh_margin: timedelta
    clock: Clock
    timeout: float
    transport: GitHubTransport | None
    calls: IdentityCalls | None


_CacheKey = tuple[str, int, int, tuple[tuple[str, str], ...], tuple[str, ...]]


@dataclass
class _Minted:
    token: SecretStr = field(repr=False)
    record: MintRecord
    holders: set[str] = field(default_factory=set)


class InstallationMinter:
    """Mints installation tokens for one App installation, with its own client and caches."""

    kind: IdentityKind = "app"

    def __init__(
        self,
        ident: IdentitySettings,
        identity_name: str = DEFAULT_IDENTITY,
        *,
        link: IdentityLink,
        per_worker: bool = False,
        refresh_margin: timedelta = DEFAULT_REFRESH_MARGIN,
        clock: Clock = utc_now,
    ) -> None:
        assert ident.app_id is not None and ident.installation_id is not None
        self.name = identity_name
        # Refused here, not at the first mint: an unknown name must never mean "no ceiling".
        ceiling_of(ident.ceiling)
        self.ceiling = ident.ceiling
        self.api_url = link.url
        self.app_id = ident.app_id
        self.installation_id = ident.installation_id
        self.per_worker = per_worker
        self.refresh_margin = refresh_margin
        self.stats = MintStats()
        self._clock = clock
        private_key = read_private_key(ident, identity_name)
        self._signer = AppJwtSigner(
            ident.app_id, private_key, identity_name=identity_name, clock=clock
        )
        # Minting spends the App's budget; revoking, the installation's (through ``calls``).
        self._api = link.api(identity_name)
        self._jwt = AppJwtAuth(self._signer.jwt, identity_name)
        self._bot_login = ident.bot_login
        # ``_lock`` guards the caches between awaits (never held across one, so no coroutine
        # waits on it); the asyncio locks are held across GitHub calls.
        self._lock = threading.Lock()
        self._login_lock = asyncio.Lock()
        self._key_locks: dict[_CacheKey, asyncio.Lock] = {}
        self._current: dict[_CacheKey, _Minted] = {}
        self._by_fingerprint: dict[str, _Minted] = {}
        self._lease_ids = itertools.count(1)

    @classmethod
    def from_identity(
        cls, ident: IdentitySettings, name: str, *, api_url: str, **options: Unpack[MinterOptions]
    ) -> InstallationMinter:
        link = IdentityLink(
            api_url,
            timeout=options.get("timeout", 30.0),
            transport=options.get("transport"),
            calls=options.get("calls"),
        )
        return cls(
            ident,
            name,
            link=link,
            per_worker=options.get("per_worker", False),
            refresh_margin=options.get("refresh_margin", DEFAULT_REFRESH_MARGIN),
            clock=options.get("clock", utc_now),
        )

    def __repr__(self) -> str:
        return (
            f"InstallationMinter(name={self.name!r}, api_url={self.api_url!r}, "
            f"app_id={self.app_id}, installation_id={self.installation_id})"
        )

    # -- who we are ----------------------------------------------------------------------------

    async def bot_login(self) -> str:
        """``<slug>[bot]`` from ``GET /app`` (once), unless the identity configures its login."""
        if self._bot_login is not None:
            return self._bot_login
        async with self._login_lock:
            if self._bot_login is None:
                reply = await self._api.app(self._jwt)
                slug = reply.field("slug")
                if not reply.ok or not isinstance(slug, str) or not slug:
                    raise MintRefused(
                        f"identity {self.name!r}: GET /app did not return the App's slug "
                        f"({reply.github_message()}); check the App id and private key"
                    )
                self._bot_login = f"{slug}[bot]"
            return self._bot_login

    async def app_events(self) -> frozenset[str]:
        """The events the App subscribes to (``GET /app``'s ``events``): what GitHub sends its
        webhook, whatever the code acts on. Read anew each time; ``swarm verify`` asks."""
        events = await self._app_field("events", list, "list the App's events")
        return frozenset(str(e) for e in events)

    async def _app_field(self, name: str, kind: type[_F], what: str) -> _F:
        """One field of ``GET /app`` (App JWT), refused in one line when GitHub did not give it
        as ``kind``; read anew on each call."""
        reply = await self._api.app(self._jwt)
        value = reply.field(name)
        if not reply.ok or not isinstance(value, kind):
            raise MintRefused(
                f"identity {self.name!r}: GET /app did not {what} ({reply.github_message()})"
            )
        return value

    async def hook_deliveries(self, per_page: int, cursor: str | None = None) -> Reply:
        """A page of the App's webhook deliveries (App JWT, the App's budget)."""
        return await self._api.hook_deliveries(self._jwt, per_page, cursor)

    async def redeliver_hook(self, delivery_id: int) -> Reply:
        """Ask GitHub to redeliver one of the App's webhook deliveries (App JWT)."""
        return await self._api.redeliver_hook(self._jwt, delivery_id)

    async def installation_permissions(self) -> dict[str, str] | None:
        """What the installation grants now (``GET /app/installations``' ``permissions``): an
        owner accepts an App's new permissions per installation, so the App's registration
        (``GET /app``) may ask for more than an installation gives. None when not listed."""
        reply = await self._api.installations(self._jwt)
        found = reply.body if reply.ok and isinstance(reply.body, list) else []
        for inst in found:
            if isinstance(inst, dict) and inst.get("id") == self.installation_id:
                perms = inst.get("permissions")
                return {str(k): str(v) for k, v in perms.items()} if isinstance(perms, dict) else {}
        return None

    def over_ceiling(self, granted: dict[str, str] | None) -> str | None:
        """One line when the installation grants (``granted``, from
        :meth:`installation_permissions`) this writer identity more than its ceiling; None when
        within it. Only a writer is held to it: a reviewing App may be granted contents:write
        for the thread-resolution exception (agents.identity.resolution)."""
        if self.ceiling == DEFAULT_CEILING:
            return None
        if granted is None:
            return (
                f"identity {self.name!r}: refused: GitHub does not list installation "
                f"{self.installation_id}"
            )
        problems = check_permissions(granted, "the installation grants", self.ceiling)
        if not problems:
            return None
        return f"identity {self.name!r}: refused: " + "; ".join(problems)

    async def app_permissions(self) -> dict[str, str]:
        """What the App's registration asks for (``GET /app``'s ``permissions``)."""
        perms = await self._app_field("permissions", dict, "name the App's permissions")
        return {str(k): str(v) for k, v in perms.items()}

    async def mint_unleased(self, scope: TokenScope, *, role: str) -> tuple[SecretStr, MintRecord]:
        """A token for one use by code, outside the leases and the worker ceiling: the caller
        checks the scope (``agents.identity.resolution``) and revokes it with
        :meth:`revoke_unleased` at once. Never shared, never cached."""
        await self.bot_login()
        minted = await self._mint(scope, role)
        return minted.token, minted.record

    async def revoke_unleased(self, token: SecretStr) -> bool:
        return await self._revoke_token(token)

    # -- leases --------------------------------------------------------------------------------

    async def acquire(self, scope: TokenScope, *, role: str, holder: str) -> TokenLease:
        """A token for ``holder`` limited to ``scope``; refuses scopes above the ceiling."""
        scope.check(role, self.ceiling)
        login = await self.bot_login()
        if self.per_worker:
            minted = await self._mint(scope, role)
            with self._lock:
                self._by_fingerprint[minted.record.token_fingerprint] = minted
                return self._lease(minted, scope, holder, login, shared=False)
        key = self._key(scope)
        with self._lock:
            key_lock = self._key_locks.setdefault(key, asyncio.Lock())
        # One mint per key at a time: a hundred workers arriving together wait for the first.
        # A cached token is leased under the lock ``release`` drops it under, so it is never
        # revoked between being looked up and being leased.
        async with key_lock:
            with self._lock:
                cached = self._current.get(key)
                if cached is not None and self._fresh(cached):
                    self.stats.cache_hits += 1
                    # Held before the lock is let go: a release in between cannot revoke it.
                    return self._lease(cached, scope, holder, login, shared=True)
                if cached is not None:
                    # Too close to expiry for a new holder; its holders keep it until they release.
                    del self._current[key]
            fresh = await self._mint(scope, role)
            with self._lock:
                self._current[key] = fresh
                self._by_fingerprint[fresh.record.token_fingerprint] = fresh
                return self._lease(fresh, scope, holder, login, shared=True)

    async def release(self, lease: TokenLease) -> None:
        """The holder is done; a token is revoked with its last holder, shared or not."""
        with self._lock:
            minted = self._by_fingerprint.get(lease.fingerprint)
            if minted is None:
                return
            minted.holders.discard(lease.lease_id)
            if minted.holders:
                return
            del self._by_fingerprint[lease.fingerprint]
            # Out of the cache under the same lock that hands it out: nobody leases it any more.
            key = self._key(lease.scope)
            if self._current.get(key) is minted:
                del self._current[key]
        if not await self._revoke(minted):
            with self._lock:  # still alive at GitHub (a refusal, a pause): aclose() tries again
                self._by_fingerprint.setdefault(lease.fingerprint, minted)

    async def aclose(self) -> None:
        """End of run: revoke every token still alive, then drop the connection pool."""
        with self._lock:
            remaining = list(self._by_fingerprint.values())
            self._by_fingerprint.clear()
            self._current.clear()
        for minted in remaining:
            await self._revoke(minted)
        await self._api.aclose()

    def live_fingerprints(self) -> list[str]:
        with self._lock:
            return sorted(self._by_fingerprint)

    # -- internals -----------------------------------------------------------------------------

    def _key(self, scope: TokenScope) -> _CacheKey:
        perms, repos = scope.cache_key()
        return (self.api_url, self.app_id, self.installation_id, perms, repos)

    def _fresh(self, minted: _Minted) -> bool:
        return self._clock() < minted.record.expires_at - self.refresh_margin

    def _lease(
        self, minted: _Minted, scope: TokenScope, holder: str, login: str, *, shared: bool
    ) -> TokenLease:
        """A new hold on ``minted``; the caller holds ``self._lock``."""
        lease_id = f"{holder}#{next(self._lease_ids)}"
        minted.holders.add(lease_id)
        return TokenLease(
            lease_id=lease_id,
            holder=holder,
            identity_name=self.name,
            kind="app",
            expected_login=login,
            scope=scope,
            token=minted.token,
            fingerprint=minted.record.token_fingerprint,
            record=minted.record,
            installation_id=self.installation_id,
            shared=shared,
            ceiling=self.ceiling,
        )

    async def _mint(self, scope: TokenScope, role: str) -> _Minted:
        body = {"repositories": scope.repository_names(), "permissions": dict(scope.permissions)}
        now = self._clock()
        reply = await self._api.mint(self._jwt, self.installation_id, body)
        where = f"identity {self.name!r} (installation {self.installation_id}), role {role!r}"
        if reply.status != 201 or not isinstance(reply.body, dict):
            named = list(scope.repositories)
            if reply.status in (404, 422) and len(named) > 1:
                named = await self._refused_alone(named) or named
            repos = ", ".join(named) or "the installation's repositories"
            # 404/422: a repository the installation does not cover (or that does not exist).
            hint = "; is the App installed there?" if reply.status in (404, 422) else ""
            raise MintRefused(
                f"GitHub refused a token for {repos} to {where}: {reply.github_message()}{hint}"
            )
        token = token_of(reply, where)
        self.stats.mints += 1
        try:
            minted = _Minted(token, record_of(reply, token, self.installation_id, now, where))
            excess = excess_grant(scope, minted.record, reply.body)
            if excess:
                self.stats.refused_grants += 1
                raise MintRefused(
                    f"mint response grants more than asked for {where}: {', '.join(excess)}"
                )
        except Exception as exc:
            # GitHub holds a live token we will never use: it dies before the failure surfaces.
            revoked = await self._revoke_token(token)
            note = "revoked" if revoked else "NOT revoked (revoke it by hand)"
            message = exc if isinstance(exc, MintRefused) else f"{where}: {type(exc).__name__}"
            raise MintRefused(f"{message}; token {fingerprint(token)} {note}") from None
        log.info(
            "minted token %s for %s: %s on %s, expires %s",
            minted.record.token_fingerprint,
            where,
            permission_text(minted.record.permissions),
            ", ".join(minted.record.repositories),
            minted.record.expires_at.isoformat(),
        )
        return minted

    async def _refused_alone(self, repositories: list[str]) -> list[str]:
        """After GitHub refused one token for several repositories: those it refuses on their
        own (each asked for with metadata:read only, and any token given revoked at once), so
        the error names the wrong repository rather than every one of the run. Empty when each
        is granted alone: then the refusal was about the permissions, not a repository."""
        refused = []
        for full in repositories[:_PROBES]:
            body = {"repositories": [full.split("/", 1)[1]], "permissions": {"metadata": "read"}}
            reply = await self._api.mint(self._jwt, self.installation_id, body)
            if reply.status != 201:
                refused.append(full)
                continue
            token = reply.field("token")
            if isinstance(token, str) and token:
                await self._revoke_token(SecretStr(token))
        return refused

    async def _revoke(self, minted: _Minted) -> bool:
        if self._clock() >= minted.record.expires_at:
            return True  # already dead; GitHub would answer 401
        return await self._revoke_token(minted.token)

    async def _revoke_token(self, token: SecretStr) -> bool:
        fp = fingerprint(token)
        try:
            # The login is known: no token is minted before ``bot_login`` has answered.
            auth = InstallationTokenAuth.fixed(token, self.name)
            reply = await self._api.revoke(auth, await self.bot_login())
        except Exception as exc:  # the run must go on; the failure is counted and logged
            self.stats.revocation_failures += 1
            log.warning("could not revoke token %s: %s", fp, type(exc).__name__)
            return False
        if reply.status in (204, 401):
            self.stats.revocations += 1
            log.info("revoked token %s", fp)
            return True
        self.stats.revocation_failures += 1
        log.warning("could not revoke token %s: %s", fp, reply.github_message())
        return False
