"""The one place the layers meet: build a Runtime (store, roles, sealer, dispatcher, verifier,
gateways, and the worker's narrow dependencies) from Settings and a model client. Flows and the
CLI build one per process; the model client is built by the caller (``flows.run.models``)."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import SecretStr

from agents.dispatch.dispatcher import DISCOVERY_PERMISSIONS, Dispatcher
from agents.dispatch.sealing import EnvelopeSealer, generate_sealing_key
from agents.github.committed import CommittedFiles
from agents.github.pull_snapshots import PullSnapshots
from agents.github.writes import WriteLedger
from agents.identity.claim import IdentityClaim, TokenScope
from agents.identity.errors import IdentityBlocked
from agents.identity.lease import TokenLease
from agents.identity.verify import IdentityVerifier
from agents.roles import Role
from agents.roles.files import load_roles
from agents.settings.model import Settings
from agents.store.store import Store
from agents.worker.deps import WorkerDeps

log = logging.getLogger("swarm.wiring")

if TYPE_CHECKING:
    from agents.github.gateway import GitHubGateway
    from agents.github.records import CallObserver
    from agents.llm.client import LLMClient
    from agents.ratelimit.github.limits import ThrottleLimits
    from agents.ratelimit.github.registry import IdentityThrottles
    from agents.ratelimit.github.snapshot import IdentitySnapshot
    from agents.ratelimit.github.throttle import BudgetBackend, IdentityThrottle
    from agents.tools.context import ThreadResolver
    from agents.transport.client import GitHubTransport


@dataclass(frozen=True)
class _LeaseToVerify:
    """A discovery lease in the shape the verifier checks (an opened envelope's)."""

    lease: TokenLease

    @property
    def envelope(self) -> _LeaseToVerify:
        return self

    @property
    def identity(self) -> IdentityClaim:
        return self.lease.claim()

    @property
    def credential(self) -> SecretStr:
        return self.lease.token


@dataclass
class Runtime:
    settings: Settings
    store: Store
    roles: dict[str, Role]
    sealer: EnvelopeSealer
    dispatcher: Dispatcher
    verifier: IdentityVerifier
    llm: LLMClient
    model_id: str
    # Every identity's throttle, by login: its workers and the identity layer's calls share it.
    throttles: IdentityThrottles
    dry_run: bool = False
    # What each worker gets: composed once, here, from the parts above.
    worker: WorkerDeps = field(init=False)
    # The run's writes against its caps (SWARM_WRITE_CAPS): every gateway made here counts in it.
    writes: WriteLedger = field(init=False)
    # One transport (connection pools, githubkit configuration) per identity, shared by all
    # its gateways: building one per worker cost a new pool and new connections each time.
    _transports: dict[str, GitHubTransport] = field(default_factory=dict)
    # Files read at a commit (repository guidance at a base SHA), shared by all its gateways.
    committed: CommittedFiles = field(default_factory=CommittedFiles)
    # What discovery read of each PR at its head (files, reviews), for the workers reviewing it.
    pull_snapshots: PullSnapshots = field(default_factory=PullSnapshots)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.writes = WriteLedger(self.settings.write_caps)
        self.worker = WorkerDeps(
            opener=self.sealer,
            verifier=self.verifier,
            gateways=self.gateway,
            model=self.llm,
            store=self.store,
            roles=self.roles,
            model_id=self.model_id,
            dry_run=self.dry_run,
            registry=self.llm.registry,
            calibrations=self.llm.calibrations,
            path_overlays=overlay_rules(self.settings, self.roles),
            resolvers=self.thread_resolver if self.settings.resolve_threads else None,
        )

    def throttle(self, login: str) -> IdentityThrottle:
        """The identity's throttle: every worker of one bot login shares it."""
        return self.throttles(login)

    def gateway(
        self,
        login: str,
        token_provider: Callable[[], str | SecretStr],
        *,
        worker_id: str,
        on_call: CallObserver | None = None,
        target: str | None = None,
    ) -> GitHubGateway:
        """A gateway acting as ``login``; its writes count against the run's caps, a write by
        comment or thread id as one on ``target`` (the worker's PR, ``owner/name#N``)."""
        from agents.github.gateway import GatewayRun, GitHubGateway

        throttle = self.throttle(login)
        return GitHubGateway(
            self.settings.github_api_url,
            login,
            token_provider,
            throttle,
            worker_id=worker_id,
            transport=self._transport(login, throttle.limits.max_concurrency),
            run=GatewayRun(
                on_call=on_call,
                committed=self.committed,
                snapshots=self.pull_snapshots,
                writes=self.writes,
                write_target=target,
            ),
        )

    def thread_resolver(
        self, identity_name: str, login: str, *, worker_id: str, target: str | None
    ) -> ThreadResolver | None:
        """Resolves threads on one repository with a token minted for the mutations alone
        (``agents.identity.resolution``), on the identity's throttle; an App identity only (a
        bot PAT's grant is what it is). A refused mint or mutation leaves the threads open."""
        from agents.identity.minter import InstallationMinter

        source = self.dispatcher.source(identity_name)
        if not isinstance(source, InstallationMinter):
            return None

        async def resolve(repo: str, thread_ids: Sequence[str]) -> set[str]:
            from agents.identity.errors import MintRefused
            from agents.identity.resolution import resolution_token

            done: set[str] = set()
            try:
                async with resolution_token(source, repo) as token:
                    gateway = self.gateway(login, lambda: token, worker_id=worker_id, target=target)
                    try:
                        for thread in thread_ids:
                            if await _resolved(gateway, thread):
                                done.add(thread)
                    finally:
                        await gateway.aclose()
            except MintRefused as exc:
                log.warning("threads on %s stay open: %s", repo, exc)
            return done

        return resolve

    def _transport(self, login: str, max_connections: int) -> GitHubTransport:
        from agents.transport.client import GitHubTransport

        with self._lock:
            found = self._transports.get(login)
            if found is None:
                found = GitHubTransport(
                    self.settings.github_api_url,
                    identity=login,
                    timeout=self.settings.http_timeout_seconds,
                    max_connections=max_connections,
                )
                self._transports[login] = found
            return found

    @asynccontextmanager
    async def discovery(
        self,
        identity_name: str,
        repos: list[str],
        permissions: dict[str, str] | None = None,
    ) -> AsyncIterator[tuple[GitHubGateway, str | None]]:
        """A gateway as the bot (never the maintainer) for listing work, read-only unless
        ``permissions`` say otherwise, and the login GitHub confirmed for it (None when it could
        not be verified).

        Only the verified login's review markers count in planning: a configured login is a
        claim, not a proof. An identity that fails verification still lists work, with no marker
        trusted, so its workers are dispatched and refuse visibly, each with its reason.
        """
        wanted = dict(permissions or DISCOVERY_PERMISSIONS)
        scope = TokenScope(repositories=tuple(repos), permissions=wanted)
        holder = f"discovery-{os.getpid()}"
        lease = await self.dispatcher.lease(identity_name, scope, role="discovery", holder=holder)
        try:
            verified: str | None = None
            try:
                found = await self.verifier.verify(_LeaseToVerify(lease))
                verified = found.login
            except IdentityBlocked as exc:
                log.warning("discovery as %s trusts no review marker: %s", identity_name, exc)
            login = verified or lease.expected_login
            gateway = self.gateway(login, lambda: lease.token, worker_id="discovery")
            try:
                yield gateway, verified
            finally:
                await gateway.aclose()
        finally:
            await self.dispatcher.release_lease(identity_name, lease)

    async def snapshots(self) -> list[IdentitySnapshot]:
        return [await t.snapshot() for t in self.throttles.all().values()]

    async def aclose(self) -> None:
        await self.dispatcher.aclose()
        await self.verifier.aclose()
        await self.llm.aclose()
        self.throttles.close()
        with self._lock:
            transports, self._transports = list(self._transports.values()), {}
        for transport in transports:
            await transport.aclose()
        self.store.close()


async def _resolved(gateway: GitHubGateway, thread: str) -> bool:
    """Whether GitHub resolved ``thread``; a refusal (200 with a FORBIDDEN error) is False."""
    from agents.github.errors import GitHubApiError

    try:
        return await gateway.resolve_review_thread(thread)
    except GitHubApiError as exc:
        log.warning("review thread stays open: %s", exc)
        return False


def overlay_rules(settings: Settings, roles: Mapping[str, Role]) -> tuple[tuple[str, Role], ...]:
    """``SWARM_PATH_OVERLAYS`` resolved against the roles; an unknown role is a setting error."""
    from agents.settings.model import ConfigError

    rules = []
    for glob, role_id in settings.path_overlays.items():
        if role_id not in roles:
            known = ", ".join(sorted(roles))
            raise ConfigError(
                f"SWARM_PATH_OVERLAYS: {glob!r} names no role {role_id!r} (known: {known})"
            )
        rules.append((glob.lstrip("/"), roles[role_id]))
    return tuple(rules)


def build_runtime(
    settings: Settings,
    llm: LLMClient,
    model_id: str,
    *,
    dry_run: bool = False,
    throttle_limits: ThrottleLimits | None = None,
) -> Runtime:
    """Everything one process needs to dispatch and run workers, from validated settings and
    the model client (closed with the runtime); ``model_id`` is asked for when a role names
    no model."""
    from agents.github.identity_calls import ThrottledIdentityCalls
    from agents.ratelimit.github.registry import IdentityThrottles

    maintainer = settings.require_maintainer_login()
    roles = load_roles(settings.roles_dir)
    overlay_rules(settings, roles)  # a bad overlay is refused before anything opens
    key = settings.sealing_key or generate_sealing_key()
    sealer = EnvelopeSealer(key)
    store = Store.open(settings.store_url, settings.data_dir)
    throttles = IdentityThrottles(
        lambda: budget_backend(settings, store), throttle_limits or settings.github_limits
    )
    # The identity layer's calls made as an identity (verifying, revoking) spend its budget too.
    calls = ThrottledIdentityCalls(throttles)
    dispatcher = Dispatcher(settings, roles, sealer, source_options={"calls": calls})
    verifier = IdentityVerifier(
        settings.github_api_url, maintainer, timeout=settings.http_timeout_seconds, calls=calls
    )
    return Runtime(
        settings=settings,
        store=store,
        roles=roles,
        sealer=sealer,
        dispatcher=dispatcher,
        verifier=verifier,
        llm=llm,
        model_id=model_id,
        throttles=throttles,
        dry_run=dry_run,
    )


def budget_backend(settings: Settings, store: Store) -> BudgetBackend:
    """Where an identity's budget lives: the store's rows when processes share it."""
    from agents.ratelimit import InMemoryBackend, RowBackend
    from agents.ratelimit.github.buckets import IdentityState

    if settings.shared_throttle():
        return RowBackend(IdentityState, store)
    return InMemoryBackend(IdentityState)
