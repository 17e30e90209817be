"""The store is the receiver's queue: an accepted delivery's work is on its row before the 202.

Each receiver has a holder name (host, process id and a random token). It claims a delivery's
row when it records it, renews its claims every few seconds while it lives, and gives a claim up
when the work ends. A receiver that starts (after a crash, a restart, a deploy), and every
receiver now and then, takes over the rows whose claim lapsed or whose holder is known dead (a
process of this host that is gone, or an earlier process with this one's id): their work was
accepted and never finished. Before that work runs again, the flow runs the dead holder left
RUNNING in Prefect are marked Crashed, and its store run and workers end failed, so the review
claims they held are taken over as any dead worker's are (the review keys keep a review that
was posted from being posted again).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection
from contextvars import ContextVar
from datetime import datetime, timedelta
from typing import Protocol

from agents.processes import dead_to, holder_name
from agents.redact import redact
from agents.store.records import DeliveryEnd, DeliveryRecord, RunRecord

log = logging.getLogger("flows.webhook")

# How long a claim holds without renewal; a receiver renews its claims every third of it.
LEASE = timedelta(seconds=30)
# A delivery taken over this often killed every receiver that ran it: it is failed instead.
MAX_ATTEMPTS = 3
# The delivery whose work the current in-process flow run does (its flow run's tag says so).
DELIVERY: ContextVar[str | None] = ContextVar("swarm_delivery", default=None)
TAG_PREFIX = "swarm-delivery:"


def delivery_tag(delivery_id: str) -> str:
    return TAG_PREFIX + delivery_id


class DeliveryRows(Protocol):
    """The store's delivery rows, as the receiver and its runner move them along."""

    def finish_delivery(
        self, delivery_id: str, end: DeliveryEnd, *, only_from: Collection[str] | None = None
    ) -> bool: ...


class QueueStore(DeliveryRows, Protocol):
    """The store's delivery claims and run endings, as far as the queue needs them."""

    def renew_delivery_claims(self, claimed_by: str, until: datetime) -> int: ...

    def take_over_delivery(
        self,
        delivery_id: str,
        claimed_by: str,
        until: datetime,
        *,
        dead: Callable[[str], bool] = ...,
        body_sha256: str | None = None,
    ) -> DeliveryRecord | None: ...

    def take_over_deliveries(
        self,
        claimed_by: str,
        until: datetime,
        *,
        dead: Callable[[str], bool] = ...,
        limit: int = ...,
    ) -> list[DeliveryRecord]: ...

    def run_for_flow_run(self, prefect_flow_run_id: str) -> RunRecord | None: ...

    def abandon_run(self, run_id: str, reason: str) -> list[str]: ...


Crash = Callable[[str, QueueStore, str], Awaitable[int]]


async def crash_left_runs(delivery_id: str, store: QueueStore, reason: str) -> int:
    """Mark Crashed the flow runs (and their task runs) that a dead receiver left unfinished
    for ``delivery_id`` (found by their tag), and end their store runs and workers; how many
    flow runs there were."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        FlowRunFilter,
        FlowRunFilterId,
        FlowRunFilterState,
        FlowRunFilterStateType,
        FlowRunFilterTags,
        TaskRunFilter,
        TaskRunFilterState,
        TaskRunFilterStateType,
    )
    from prefect.client.schemas.objects import StateType
    from prefect.states import Crashed

    alive = [StateType.RUNNING, StateType.PENDING, StateType.SCHEDULED, StateType.PAUSED]
    async with get_client() as client:
        runs = await client.read_flow_runs(
            flow_run_filter=FlowRunFilter(
                tags=FlowRunFilterTags(all_=[delivery_tag(delivery_id)]),
                state=FlowRunFilterState(type=FlowRunFilterStateType(any_=alive)),
            )
        )
        for run in runs:
            await client.set_flow_run_state(run.id, Crashed(message=reason), force=True)
            tasks = await client.read_task_runs(
                flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[run.id])),
                task_run_filter=TaskRunFilter(
                    state=TaskRunFilterState(type=TaskRunFilterStateType(any_=alive))
                ),
            )
            for task in tasks:
                await client.set_task_run_state(task.id, Crashed(message=reason), force=True)
            ended = await asyncio.to_thread(_abandon, store, str(run.id), reason)
            log.warning(
                "delivery %s: flow run %s left running by a dead receiver marked Crashed "
                "(%d worker(s) ended)",
                delivery_id,
                run.id,
                ended,
            )
    return len(runs)


def _abandon(store: QueueStore, flow_run_id: str, reason: str) -> int:
    run = store.run_for_flow_run(flow_run_id)
    if run is None or run.status != "running":
        return 0
    return len(store.abandon_run(run.id, reason))


class DeliveryQueue:
    """This receiver's claims on the store's delivery rows."""

    def __init__(
        self,
        store: QueueStore,
        *,
        lease: timedelta = LEASE,
        holder: str | None = None,
        crash: Crash = crash_left_runs,
    ) -> None:
        self.store = store
        self.lease = lease
        self.holder = holder or holder_name()
        self.crash = crash
        self._dead = dead_to(self.holder)

    def claim(self) -> tuple[str, datetime]:
        """The claim a delivery recorded now is given: this receiver, until when."""
        return self.holder, self._until()

    def _until(self) -> datetime:
        from agents.store.base import utcnow

        return utcnow() + self.lease

    async def redelivered(self, delivery_id: str, body_sha256: str) -> DeliveryRecord | None:
        """A delivery seen before, sent again (GitHub's Redeliver): its row, now this
        receiver's, when its work never finished and nobody holds it; else None."""
        row = await asyncio.to_thread(
            lambda: self.store.take_over_delivery(
                delivery_id,
                self.holder,
                self._until(),
                dead=self._dead,
                body_sha256=body_sha256,
            )
        )
        return await self._ready(row)

    async def take_over(self) -> list[DeliveryRecord]:
        """The unfinished deliveries of receivers that are gone, now this receiver's, oldest
        first, each ready to run (what their dead holder left running is marked crashed)."""
        rows = await asyncio.to_thread(
            lambda: self.store.take_over_deliveries(self.holder, self._until(), dead=self._dead)
        )
        ready = [await self._ready(row) for row in rows]
        return [row for row in ready if row is not None]

    async def _ready(self, row: DeliveryRecord | None) -> DeliveryRecord | None:
        if row is None:
            return None
        if row.attempts > MAX_ATTEMPTS:
            why = f"given up: {row.attempts - 1} receivers took it and none finished it"
            await asyncio.to_thread(
                self.store.finish_delivery, row.delivery_id, DeliveryEnd("failed", why)
            )
            log.warning("delivery %s: %s", row.delivery_id, why)
            return None
        log.info(
            "delivery %s (%s) left %s by a receiver that is gone: taken over",
            row.delivery_id,
            row.outcome,
            row.claimed_by,
        )
        if row.outcome == "running":
            reason = f"the receiver running it ({row.claimed_by}) is gone"
            try:
                await self.crash(row.delivery_id, self.store, reason)
            except Exception as exc:  # Prefect unreachable: the work still runs again
                log.warning(
                    "delivery %s: its earlier flow runs were not marked crashed: %s: %s",
                    row.delivery_id,
                    type(exc).__name__,
                    redact(str(exc)),
                )
        # Its work is handed on afresh, as when it was first received.
        await asyncio.to_thread(
            lambda: self.store.finish_delivery(
                row.delivery_id, DeliveryEnd("received"), only_from=("enqueued", "running")
            )
        )
        return row

    async def renew_forever(self) -> None:
        """Renew this receiver's claims every third of the lease, until cancelled."""
        every = self.lease.total_seconds() / 3
        while True:
            await asyncio.sleep(every)
            try:
                await asyncio.to_thread(
                    self.store.renew_delivery_claims, self.holder, self._until()
                )
            except Exception as exc:  # the store is down a moment: the next renewal tries
                log.warning("delivery claims not renewed: %s", redact(str(exc)))
