"""Two ways to start the flow run an event asks for.

- :class:`DeploymentEnqueuer`: ``run_deployment(..., timeout=0, idempotency_key=key)`` on a
  served or worker-backed ``swarm-run`` deployment. It returns as soon as the flow run exists;
  Prefect hands back the same flow run for a key it has seen, so a push delivered twice is
  reviewed by one run, and the run shows in the UI like any other.
- :class:`InProcessEnqueuer`: no deployment configured; the flow runs inside the webhook
  process, at most ``concurrency`` at once (the rest wait their turn), deduplicated by key for
  the life of the process. Stopping the server waits for the runs in hand.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from flows.run.request import RunRequest

log = logging.getLogger("flows.events")

# What a queued piece of work is: a flow run's request, or the feedback the learner reads.
P = TypeVar("P")
KEYS_REMEMBERED = 10_000


class Overlaid:
    """Every run ``inner`` starts carries ``overlay`` as its session overlay (``swarm webhook
    serve --overlay``); a PR command's focus is a call overlay and still lies above it."""

    def __init__(
        self, inner: DeploymentEnqueuer | InProcessEnqueuer[RunRequest], overlay: str | None
    ) -> None:
        self.inner = inner
        self.overlay = overlay

    async def enqueue(self, request: RunRequest, key: str) -> str:
        if self.overlay:
            request = request.model_copy(update={"overlay": self.overlay})
        return await self.inner.enqueue(request, key)

    async def aclose(self) -> None:
        await self.inner.aclose()


class DeploymentEnqueuer:
    def __init__(self, deployment: str) -> None:
        self.deployment = deployment

    async def enqueue(self, request: RunRequest, key: str) -> str:
        from prefect.client.orchestration import get_client
        from prefect.deployments.flow_runs import arun_deployment

        # The event's fields over the deployment's request (its model, its worker cap, ...).
        async with get_client() as client:
            deployment = await client.read_deployment_by_name(self.deployment)
        asked = request.over(RunRequest.of_parameters(deployment.parameters))
        run = await arun_deployment(
            deployment.id,
            parameters=asked.parameters(),
            timeout=0,
            idempotency_key=key,
            as_subflow=False,
        )
        return str(run.id)

    async def aclose(self) -> None:
        return None


async def run_flow_here(request: RunRequest) -> object:
    """One ``swarm-run`` flow run in this process (its own runtime, store and gateways)."""
    from flows.run.flow import swarm_run

    return await swarm_run(request, return_state=True)


class InProcessEnqueuer(Generic[P]):
    def __init__(self, concurrency: int, runner: Callable[[P], Awaitable[object]]) -> None:
        self.runner = runner
        self.limit = asyncio.Semaphore(concurrency)
        self._keys: OrderedDict[str, str] = OrderedDict()
        self._tasks: set[asyncio.Task[None]] = set()

    async def enqueue(self, work: P, key: str) -> str:
        known = self._keys.get(key)
        if known is not None:
            return known
        run_id = f"in-process-{uuid.uuid4().hex[:12]}"
        self._keys[key] = run_id
        while len(self._keys) > KEYS_REMEMBERED:
            self._keys.popitem(last=False)
        task = asyncio.create_task(self._run(run_id, work))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return run_id

    async def _run(self, run_id: str, work: P) -> None:
        async with self.limit:
            try:
                await self.runner(work)
            except Exception as exc:
                from agents.redact import redact

                log.warning(
                    "event run %s failed: %s: %s", run_id, type(exc).__name__, redact(str(exc))
                )

    @property
    def running(self) -> int:
        return len(self._tasks)

    async def drain(self) -> None:
        """Wait for every run started so far."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def aclose(self) -> None:
        await self.drain()
