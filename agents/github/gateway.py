"""The only path from workers to GitHub: a gateway per identity (views per worker) over one
transport, sending the identity's own token through the identity's throttle.

Built from an API URL and a token provider, a gateway owns its transport (pools, TLS context
shared per process, no HTTP cache, nothing from the host environment) and closes it with
:meth:`GitHubGateway.aclose`; a transport passed in stays the caller's to close.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from agents.github.committed import CommittedFiles
from agents.github.endpoints import GitHubEndpoints
from agents.github.errors import IdentityPaused
from agents.github.pull_snapshots import PullSnapshots
from agents.github.records import CallObserver
from agents.ratelimit.github.throttle import IdentityThrottle
from agents.transport.auth import BotTokenAuth, CredentialProvider
from agents.transport.client import GitHubTransport
from agents.transport.urls import ApiUrls

if TYPE_CHECKING:
    from agents.github.writes import WriteLedger


@dataclass(frozen=True)
class GatewayRun:
    """The run a gateway works for (none: calls outside a run): where its calls are recorded,
    the files its writer committed and the pulls it read (shared caches), its write caps, and the
    PR a write by comment or thread id counts against (the worker's, ``owner/name#N``)."""

    on_call: CallObserver | None = None
    committed: CommittedFiles | None = None
    snapshots: PullSnapshots | None = None
    writes: WriteLedger | None = None
    write_target: str | None = None


NO_RUN: Final = GatewayRun()


class GitHubGateway(GitHubEndpoints):
    """One per identity; ``for_worker(id)`` gives each worker a view sharing client and throttle."""

    def __init__(
        self,
        base_url: str,
        identity: str,
        token_provider: CredentialProvider,
        throttle: IdentityThrottle,
        *,
        worker_id: str = "default",
        transport: GitHubTransport | None = None,
        timeout: float = 30.0,
        run: GatewayRun = NO_RUN,
    ) -> None:
        if throttle.identity != identity:
            raise ValueError(
                f"throttle belongs to {throttle.identity!r}, not to identity {identity!r}"
            )
        if transport is not None and transport.urls != ApiUrls.of(base_url):
            raise ValueError(f"transport serves {transport.urls.rest!r}, not {base_url!r}")
        self._owns_transport = transport is None
        transport = transport or GitHubTransport(
            base_url,
            identity=identity,
            timeout=timeout,
            max_connections=throttle.limits.max_concurrency,
        )
        super().__init__(
            transport,
            BotTokenAuth(token_provider, identity),
            throttle,
            on_call=run.on_call,
            worker_id=worker_id,
            writes=run.writes,
            write_target=run.write_target,
        )
        self.committed = run.committed
        self.snapshots = run.snapshots

    def __repr__(self) -> str:
        return f"GitHubGateway(identity={self.identity!r}, worker_id={self.worker_id!r})"

    def for_worker(self, worker_id: str) -> GitHubGateway:
        """The same gateway (transport, token, throttle) acting on behalf of ``worker_id``."""
        view = copy.copy(self)
        view.worker_id = worker_id
        return view

    async def aclose(self) -> None:
        if self._owns_transport:
            await self._transport.aclose()

    async def __aenter__(self) -> GitHubGateway:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()


__all__ = ["NO_RUN", "GatewayRun", "GitHubGateway", "IdentityPaused"]
