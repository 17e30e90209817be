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
from typing import Any

log = logging.getLogger("flows.events")

Runner = Callable[[dict[str, Any]], Awaitable[object]]
KEYS_REMEMBERED = 10_000


class Overlaid:
    """Every run ``inner`` starts carries ``overlay`` as its session overlay (``swarm webhook
    serve --overlay``); a PR command's focus is a call overlay and still lies above it."""

    def __init__(self, inner: DeploymentEnqueuer | InProcessEnqueuer, overlay: str | None) -> None:
        self.inner = inner
        self.overlay = overlay

    async def enqueue(self, parameters: dict[str, Any], key: str) -> str:
        if self.overlay:
            parameters = {**parameters, "overlay": self.overlay}
        return await self.inner.enqueue(parameters, key)

    async def aclose(self) -> None:
        await self.inner.aclose()


class DeploymentEnqueuer:
    def __init__(self, deployment: str) -> None:
        self.deployment = deployment

    async def enqueue(self, parameters: dict[str, Any], key: str) -> str:
        from prefect.deployments.flow_runs import arun_deployment

        run = await arun_deployment(
            self.deployment,
            parameters=parameters,
            timeout=0,
            idempotency_key=key,
            as_subflow=False,
        )
        return str(run.id)

    async def aclose(self) -> None:
        return None


async def run_flow_here(parameters: dict[str, Any]) -> object:
    """One ``swarm-run`` flow run in this process (its own runtime, store and gateways)."""
    from flows.run.flow import swarm_run

    return await swarm_run(**parameters, return_state=True)


class InProcessEnqueuer:
    def __init__(self, concurrency: int, runner: Runner = run_flow_here) -> None:
        self.runner = runner
        self.limit = asyncio.Semaphore(concurrency)
        self._keys: OrderedDict[str, str] = OrderedDict()
        self._tasks: set[asyncio.Task[None]] = set()

    async def enqueue(self, parameters: dict[str, Any], key: str) -> str:
        known = self._keys.get(key)
        if known is not None:
            return known
        run_id = f"in-process-{uuid.uuid4().hex[:12]}"
        self._keys[key] = run_id
        while len(self._keys) > KEYS_REMEMBERED:
            self._keys.popitem(last=False)
        task = asyncio.create_task(self._run(run_id, parameters))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return run_id

    async def _run(self, run_id: str, parameters: dict[str, Any]) -> None:
        async with self.limit:
            try:
                await self.runner(parameters)
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
