"""Installation tokens for one GitHub App identity: down-scoped, checked, cached, revoked.

Sharing policy: workers asking for the same (API URL, App, installation, permissions,
repositories) share one token until ``refresh_margin`` before it expires. A shared token that
no worker holds stays cached for the next worker and is revoked when the run ends
(:meth:`InstallationMinter.close`); a token replaced near expiry is revoked as soon as its last
holder releases it. ``per_worker=True`` gives every worker its own token, revoked on release.
"""

from __future__ import annotations

import itertools
import logging
import threading
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TypedDict, Unpack

from pydantic import SecretStr

from agents.config import DEFAULT_IDENTITY, IdentityKind, IdentitySettings
from agents.identity.api import IdentityApi
from agents.identity.app_jwt import AppJwtSigner, Clock, read_private_key, utc_now
from agents.identity.claim import MintRecord, TokenScope
from agents.identity.errors import MintRefused
from agents.identity.grant import excess_grant, permission_text, read_mint_reply
from agents.identity.lease import MintStats, TokenLease
from agents.transport.auth import AppJwtAuth, InstallationTokenAuth
from agents.transport.client import GitHubTransport

log = logging.getLogger(__name__)

DEFAULT_REFRESH_MARGIN = timedelta(minutes=5)


class MinterOptions(TypedDict, total=False):
    """What a caller may tune beyond the identity's settings (tests, benchmarks, the CLI)."""

    per_worker: bool
    refresh_margin: timedelta
    clock: Clock
    timeout: float
    transport: GitHubTransport | None


_CacheKey = tuple[str, int, int, tuple[tuple[str, str], ...], tuple[str, ...]]


@dataclass
class _Minted:
    token: SecretStr = field(repr=False)
    record: MintRecord
    holders: set[str] = field(default_factory=set)
    retired: bool = False


class InstallationMinter:
    """Mints installation tokens for one App installation, with its own client and caches."""

    kind: IdentityKind = "app"

    def __init__(
        self,
        *,
        api_url: str,
        app_id: int,
        installation_id: int,
        private_key: SecretStr,
        identity_name: str = DEFAULT_IDENTITY,
        bot_login: str | None = None,
        per_worker: bool = False,
        refresh_margin: timedelta = DEFAULT_REFRESH_MARGIN,
        clock: Clock = utc_now,
        timeout: float = 30.0,
        transport: GitHubTransport | None = None,
    ) -> None:
        self.name = identity_name
        self.api_url = api_url.rstrip("/")
        self.app_id = app_id
        self.installation_id = installation_id
        self.per_worker = per_worker
        self.refresh_margin = refresh_margin
        self.stats = MintStats()
        self._clock = clock
        self._signer = AppJwtSigner(app_id, private_key, identity_name=identity_name, clock=clock)
        self._api = IdentityApi(
            transport or GitHubTransport(self.api_url, identity=identity_name, timeout=timeout)
        )
        self._jwt = AppJwtAuth(self._signer.jwt, identity_name)
        self._bot_login = bot_login
        self._lock = threading.Lock()
        self._login_lock = threading.Lock()
        self._key_locks: dict[_CacheKey, threading.Lock] = {}
        self._current: dict[_CacheKey, _Minted] = {}
        self._by_fingerprint: dict[str, _Minted] = {}
        self._lease_ids = itertools.count(1)

    @classmethod
    def from_identity(
        cls, ident: IdentitySettings, name: str, *, api_url: str, **options: Unpack[MinterOptions]
    ) -> InstallationMinter:
        assert ident.app_id is not None and ident.installation_id is not None
        return cls(
            api_url=api_url,
            app_id=ident.app_id,
            installation_id=ident.installation_id,
            private_key=read_private_key(ident, name),
            identity_name=name,
            bot_login=ident.bot_login,
            **options,
        )

    def __repr__(self) -> str:
        return (
            f"InstallationMinter(name={self.name!r}, api_url={self.api_url!r}, "
            f"app_id={self.app_id}, installation_id={self.installation_id})"
        )

    # -- who we are ----------------------------------------------------------------------------

    def bot_login(self) -> str:
        """``<slug>[bot]`` from ``GET /app`` (once), unless the identity configures its login."""
        with self._login_lock:
            if self._bot_login is None:
                reply = self._api.app(self._jwt)
                slug = reply.field("slug")
                if not reply.ok or not isinstance(slug, str) or not slug:
                    raise MintRefused(
                        f"identity {self.name!r}: GET /app did not return the App's slug "
                        f"({reply.github_message()}); check the App id and private key"
                    )
                self._bot_login = f"{slug}[bot]"
            return self._bot_login

    # -- leases --------------------------------------------------------------------------------

    def acquire(self, scope: TokenScope, *, role: str, holder: str) -> TokenLease:
        """A token for ``holder`` limited to ``scope``; refuses scopes above the ceiling."""
        scope.check(role)
        login = self.bot_login()
        if self.per_worker:
            minted = self._mint(scope, role)
            with self._lock:
                self._by_fingerprint[minted.record.token_fingerprint] = minted
            return self._lease(minted, scope, holder, login, shared=False)
        key = self._key(scope)
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        # One mint per key at a time: a hundred workers arriving together wait for the first.
        # Retiring and handing out a key's token both happen under its lock, so a token is
        # never revoked between being looked up and being leased.
        with key_lock:
            with self._lock:
                cached = self._current.get(key)
                hit = cached is not None and self._fresh(cached)
                if hit:
                    self.stats.cache_hits += 1
                stale: _Minted | None = None
                if cached is not None and not hit:
                    cached.retired = True
                    del self._current[key]
                    if not cached.holders:
                        stale = self._by_fingerprint.pop(cached.record.token_fingerprint, None)
            if cached is not None and hit:
                return self._lease(cached, scope, holder, login, shared=True)
            if stale is not None:
                self._revoke(stale)
            fresh = self._mint(scope, role)
            with self._lock:
                self._current[key] = fresh
                self._by_fingerprint[fresh.record.token_fingerprint] = fresh
            return self._lease(fresh, scope, holder, login, shared=True)

    def release(self, lease: TokenLease) -> None:
        """The holder is done. Per-worker and replaced tokens are revoked with their last holder."""
        revoke: _Minted | None = None
        with self._lock:
            minted = self._by_fingerprint.get(lease.fingerprint)
            if minted is None:
                return
            minted.holders.discard(lease.lease_id)
            if not minted.holders and (not lease.shared or minted.retired):
                revoke = self._by_fingerprint.pop(lease.fingerprint)
        if revoke is not None:
            self._revoke(revoke)

    def close(self) -> None:
        """End of run: revoke every token still alive, then drop the connection pool."""
        with self._lock:
            remaining = list(self._by_fingerprint.values())
            self._by_fingerprint.clear()
            self._current.clear()
        for minted in remaining:
            self._revoke(minted)
        self._api.close()

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
        lease_id = f"{holder}#{next(self._lease_ids)}"
        with self._lock:
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
        )

    def _mint(self, scope: TokenScope, role: str) -> _Minted:
        body = {"repositories": scope.repository_names(), "permissions": dict(scope.permissions)}
        now = self._clock()
        reply = self._api.mint(self._jwt, self.installation_id, body)
        where = f"identity {self.name!r} (installation {self.installation_id}), role {role!r}"
        if reply.status != 201 or not isinstance(reply.body, dict):
            repos = ", ".join(scope.repositories) or "the installation's repositories"
            # 404/422: a repository the installation does not cover (or that does not exist).
            hint = "; is the App installed there?" if reply.status in (404, 422) else ""
            raise MintRefused(
                f"GitHub refused a token for {repos} to {where}: {reply.github_message()}{hint}"
            )
        minted = _Minted(*read_mint_reply(reply, self.installation_id, now, where))
        self.stats.mints += 1
        excess = excess_grant(scope, minted.record, reply.body)
        if excess:
            self.stats.refused_grants += 1
            revoked = self._revoke(minted)
            note = "" if revoked else " (revoking it failed: revoke it by hand)"
            raise MintRefused(
                f"mint response grants more than asked for {where}: {', '.join(excess)}; "
                f"token {minted.record.token_fingerprint} revoked{note}"
            )
        log.info(
            "minted token %s for %s: %s on %s, expires %s",
            minted.record.token_fingerprint,
            where,
            permission_text(minted.record.permissions),
            ", ".join(minted.record.repositories),
            minted.record.expires_at.isoformat(),
        )
        return minted

    def _revoke(self, minted: _Minted) -> bool:
        fp = minted.record.token_fingerprint
        if self._clock() >= minted.record.expires_at:
            return True  # already dead; GitHub would answer 401
        try:
            reply = self._api.revoke(InstallationTokenAuth.fixed(minted.token, self.name))
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
