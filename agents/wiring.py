"""The one place the layers meet: build a Runtime (store, roles, sealer, dispatcher, verifier,
gateways, LLM client) from Settings. Flows and the CLI build one per process."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from agents.config import Settings
from agents.dispatch import DISCOVERY_PERMISSIONS, Dispatcher
from agents.envelope import EnvelopeSealer, generate_sealing_key
from agents.identity.claim import TokenScope
from agents.identity.verify import IdentityVerifier
from agents.roles import Role, load_roles
from agents.store.store import Store

if TYPE_CHECKING:
    from agents.github.gateway import GitHubGateway
    from agents.github.limits import ThrottleLimits
    from agents.github.records import CallObserver
    from agents.github.throttle import IdentityThrottle
    from agents.llm.client import LLMClient

SCRIPTED = "scripted"
# What the scripted model is billed as, so cost figures read like a real run's.
SCRIPTED_BILLING_MODEL = "claude-sonnet-4-6"
DEFAULT_LIVE_MODEL = "claude-sonnet-4-6"


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
    dry_run: bool = False
    throttle_limits: ThrottleLimits | None = None
    scripted_model: Any = None
    _throttles: dict[str, IdentityThrottle] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def throttle(self, login: str) -> IdentityThrottle:
        """The identity's throttle: every worker of one bot login shares it."""
        from agents.github.buckets import IdentityState
        from agents.github.throttle import BudgetBackend, IdentityThrottle
        from agents.ratelimit import InMemoryBackend, RowBackend

        with self._lock:
            found = self._throttles.get(login)
            if found is None:
                backend: BudgetBackend
                if self.settings.throttle_backend == "store":
                    backend = RowBackend(IdentityState, self.store)  # the store's rows
                else:
                    backend = InMemoryBackend(IdentityState)
                found = IdentityThrottle(login, limits=self.throttle_limits, backend=backend)
                self._throttles[login] = found
            return found

    def throttles(self) -> dict[str, IdentityThrottle]:
        with self._lock:
            return dict(self._throttles)

    def gateway(
        self,
        login: str,
        token_provider: Callable[[], str | SecretStr],
        *,
        worker_id: str,
        on_call: CallObserver | None = None,
    ) -> GitHubGateway:
        from agents.github.gateway import GitHubGateway

        return GitHubGateway(
            self.settings.github_api_url,
            login,
            token_provider,
            self.throttle(login),
            on_call=on_call,
            worker_id=worker_id,
            timeout=self.settings.http_timeout_seconds,
        )

    @asynccontextmanager
    async def discovery(self, identity_name: str, repos: list[str]) -> AsyncIterator[GitHubGateway]:
        """A read-only gateway as the bot (never the maintainer) for listing work."""
        scope = TokenScope(repositories=tuple(repos), permissions=DISCOVERY_PERMISSIONS)
        holder = f"discovery-{os.getpid()}"
        lease = await self.dispatcher.lease(identity_name, scope, role="discovery", holder=holder)
        gateway = self.gateway(lease.expected_login, lambda: lease.token, worker_id="discovery")
        try:
            yield gateway
        finally:
            await gateway.aclose()
            await self.dispatcher.release_lease(identity_name, lease)

    async def snapshots(self) -> list[Any]:
        return [await t.snapshot() for t in self.throttles().values()]

    async def aclose(self) -> None:
        await self.dispatcher.aclose()
        await asyncio.to_thread(self.verifier.close)
        await self.llm.aclose()
        for throttle in self.throttles().values():
            throttle.backend.close()
        self.store.close()


def build_llm(settings: Settings, model: str) -> tuple[LLMClient, str, Any]:
    """The real Anthropic client; for ``scripted``, the same client against the offline model."""
    from agents.llm.client import LLMClient

    if model == SCRIPTED:
        from sandbox.model import ScriptedModel

        scripted = ScriptedModel(require_api_key=False)
        client = LLMClient(api_key="scripted-offline-model", http_client=scripted.async_client())
        return client, SCRIPTED_BILLING_MODEL, scripted
    key = settings.anthropic_api_key
    client = LLMClient(api_key=key, base_url=settings.anthropic_base_url)
    return client, model, None


def resolve_model(settings: Settings, model: str | None) -> str:
    chosen = model or settings.model
    if chosen == SCRIPTED and model is None and settings.anthropic_api_key is not None:
        return DEFAULT_LIVE_MODEL
    return chosen


def build_runtime(
    settings: Settings,
    *,
    model: str | None = None,
    dry_run: bool = False,
    throttle_limits: ThrottleLimits | None = None,
) -> Runtime:
    """Everything one process needs to dispatch and run workers, from validated settings."""
    maintainer = settings.require_maintainer_login()
    roles = load_roles(settings.roles_dir)
    key = settings.sealing_key or generate_sealing_key()
    sealer = EnvelopeSealer(key)
    store = Store.open(settings.store_url, settings.data_dir)
    dispatcher = Dispatcher(settings, roles, sealer)
    verifier = IdentityVerifier(
        settings.github_api_url, maintainer, timeout=settings.http_timeout_seconds
    )
    llm, model_id, scripted = build_llm(settings, resolve_model(settings, model))
    return Runtime(
        settings=settings,
        store=store,
        roles=roles,
        sealer=sealer,
        dispatcher=dispatcher,
        verifier=verifier,
        llm=llm,
        model_id=model_id,
        dry_run=dry_run,
        throttle_limits=throttle_limits,
        scripted_model=scripted,
    )
