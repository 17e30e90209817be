"""Two ways to start the flow run an event asks for.

- :class:`DeploymentEnqueuer`: ``run_deployment(..., timeout=0, idempotency_key=key)`` on a
  served or worker-backed ``swarm-run`` deployment. It returns as soon as the flow run exists;
  Prefect hands back the same flow run for a key it has seen, so a push delivered twice is
  reviewed by one run, and the run shows in the UI like any other.
- :class:`InProcessEnqueuer`: no deployment configured; the flow runs inside the webhook
  process, at most ``concurrency`` at once (the rest wait their turn), deduplicated by key for
  the life of the process. Stopping the server waits for the runs in hand. Given the store's
  delivery rows, it moves each delivery's row to ``running`` when its turn comes and to
  ``done`` or ``failed`` with the flow run's id and final state when the run ends (every
  delivery that asked for the same work, by key, alike); the row, written before the 202, is
  what a restarted receiver resumes from (:mod:`flows.webhook.queue`).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import Generic, TypeVar

from agents.store.records import DeliveryEnd
from flows.run.request import RunRequest
from flows.webhook.queue import DELIVERY, DeliveryRows, delivery_tag

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

    @property
    def runs_here(self) -> bool:
        return self.inner.runs_here

    async def enqueue(self, request: RunRequest, key: str, delivery: str | None = None) -> str:
        if self.overlay:
            request = request.model_copy(update={"overlay": self.overlay})
        return await self.inner.enqueue(request, key, delivery)

    async def aclose(self) -> None:
        await self.inner.aclose()


class DeploymentEnqueuer:
    # The flow run is Prefect's once it exists: whatever serves the deployment runs it.
    runs_here = False

    def __init__(self, deployment: str) -> None:
        self.deployment = deployment

    async def enqueue(self, request: RunRequest, key: str, delivery: str | None = None) -> str:
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
    """One ``swarm-run`` flow run in this process (its own runtime, store and gateways),
    tagged with the delivery it does the work of, so a receiver taking over after a crash
    finds it."""
    from prefect import tags

    from flows.run.flow import swarm_run

    delivery = DELIVERY.get()
    with tags(*([delivery_tag(delivery)] if delivery else [])):
        return await swarm_run(request, return_state=True)


@dataclass
class _Job:
    run_id: str
    deliveries: list[str]
    # (outcome, detail, flow run id, flow state) once the run ended.
    ended: tuple[str, str | None, str, str | None] | None = None


class InProcessEnqueuer(Generic[P]):
    runs_here = True

    def __init__(
        self,
        concurrency: int,
        runner: Callable[[P], Awaitable[object]],
        deliveries: DeliveryRows | None = None,
    ) -> None:
        self.runner = runner
        self.deliveries = deliveries
        self.limit = asyncio.Semaphore(concurrency)
        self._keys: OrderedDict[str, _Job] = OrderedDict()
        self._tasks: set[asyncio.Task[None]] = set()

    async def enqueue(self, work: P, key: str, delivery: str | None = None) -> str:
        known = self._keys.get(key)
        if known is not None:
            if delivery is not None and delivery not in known.deliveries:
                known.deliveries.append(delivery)
                if known.ended is not None:
                    await self._end([delivery], known.ended)
            return known.run_id
        run_id = f"in-process-{uuid.uuid4().hex[:12]}"
        job = _Job(run_id, [delivery] if delivery else [])
        self._keys[key] = job
        while len(self._keys) > KEYS_REMEMBERED:
            self._keys.popitem(last=False)
        task = asyncio.create_task(self._run(job, work))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return run_id

    async def _run(self, job: _Job, work: P) -> None:
        from agents.redact import redact

        async with self.limit:
            running = DeliveryEnd("running")
            await self._rows(job.deliveries, running, only_from=("received", "enqueued"))
            token = DELIVERY.set(job.deliveries[0] if job.deliveries else None)
            try:
                result = await self.runner(work)
            except Exception as exc:
                detail = f"{type(exc).__name__}: {redact(str(exc))}"
                log.warning("event run %s failed: %s", job.run_id, detail)
                job.ended = ("failed", detail, job.run_id, None)
            else:
                job.ended = _ending(result, job.run_id)
            finally:
                DELIVERY.reset(token)
            await self._end(list(job.deliveries), job.ended)

    async def _end(
        self, deliveries: list[str], ended: tuple[str, str | None, str, str | None]
    ) -> None:
        outcome, detail, run_id, state = ended
        end = DeliveryEnd(outcome, detail, run_id, flow_state=state)
        await self._rows(deliveries, end, only_from=("received", "enqueued", "running"))

    async def _rows(
        self, deliveries: list[str], end: DeliveryEnd, *, only_from: Collection[str]
    ) -> None:
        rows = self.deliveries
        if rows is None or not deliveries:
            return
        outcome = end.outcome

        def write() -> None:
            for delivery in deliveries:
                rows.finish_delivery(delivery, end, only_from=only_from)

        try:
            await asyncio.to_thread(write)
        except Exception as exc:  # the store is down a moment: the row is resumed later
            from agents.redact import redact

            log.warning(
                "delivery rows %s not moved to %s: %s", deliveries, outcome, redact(str(exc))
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


def _ending(result: object, run_id: str) -> tuple[str, str | None, str, str | None]:
    """A run's end as its deliveries' rows say it: a flow run's state (done when it completed)
    with its Prefect id, or done for a runner that hands back no state."""
    from prefect.client.schemas.objects import State

    from agents.redact import redact

    if not isinstance(result, State):
        return ("done", None, run_id, None)
    flow_run = result.state_details.flow_run_id
    detail = None if result.is_completed() else redact(result.message or result.name or "")
    outcome = "done" if result.is_completed() else "failed"
    return (outcome, detail, str(flow_run) if flow_run else run_id, result.name)
