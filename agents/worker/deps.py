"""What one worker is given: narrow parts, composed once per process by ``agents.wiring``.

Never the settings, the dispatcher or the whole runtime: the worker opens its envelope, proves
its identity, talks to GitHub through a gateway for that identity only, and to the model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from pydantic import SecretStr

from agents.dispatch.envelope import OpenedEnvelope, SealedEnvelope
from agents.llm.estimate import Calibrations
from agents.llm.models import DEFAULT_REGISTRY, ModelRegistry
from agents.roles import Role
from agents.worker.ports import Model

if TYPE_CHECKING:
    from agents.github.gateway import GitHubGateway
    from agents.github.records import CallObserver
    from agents.identity.verify import VerifiedIdentity
    from agents.store.store import Store
    from agents.tools.context import ThreadResolver


class EnvelopeOpener(Protocol):
    """Checks the seal and expiry and decrypts the credential (``EnvelopeSealer``)."""

    def open(self, sealed: SealedEnvelope) -> OpenedEnvelope: ...


class IdentityCheck(Protocol):
    """Proves the credential is the identity the envelope names (``IdentityVerifier``)."""

    async def verify(self, opened: OpenedEnvelope) -> VerifiedIdentity: ...


class GatewayFactory(Protocol):
    """A gateway acting as ``login`` on that identity's shared throttle (``Runtime.gateway``)."""

    def __call__(
        self,
        login: str,
        token_provider: Callable[[], str | SecretStr],
        *,
        worker_id: str,
        on_call: CallObserver | None = None,
        target: str | None = None,
    ) -> GitHubGateway: ...


class ResolverFactory(Protocol):
    """What resolves the worker's fixed findings' threads, for its identity (None: nothing
    may; ``Runtime.thread_resolver``)."""

    def __call__(
        self, identity_name: str, login: str, *, worker_id: str, target: str | None
    ) -> ThreadResolver | None: ...


@dataclass(frozen=True)
class WorkerDeps:
    opener: EnvelopeOpener
    verifier: IdentityCheck
    gateways: GatewayFactory
    model: Model
    store: Store
    # The process's one roles mapping: the envelope's role refs are resolved in it.
    roles: Mapping[str, Role]
    # The model to ask when the role chain names none.
    model_id: str
    dry_run: bool = False
    # Context windows and prices per model id (the model client's, with SWARM_MODELS applied).
    registry: ModelRegistry = DEFAULT_REGISTRY
    # Characters per token per model, learned from answers (shared with the model client).
    calibrations: Calibrations = field(default_factory=Calibrations)
    # (path glob, role) call overlays from configuration, first match wins.
    path_overlays: tuple[tuple[str, Role], ...] = ()
    # Resolves review threads with a token of its own (SWARM_RESOLVE_THREADS); None: nothing.
    resolvers: ResolverFactory | None = None
