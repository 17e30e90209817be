"""Adapters between the flow and the runtime's parts: the store's run record and bucket
snapshots. Kept apart from the flow so the flow reads as steps. Discovery's sources live in
:mod:`agents.planning.sources`; ``repos_by_owner`` and ``role_identity`` are named here too for
the flow's modules."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal

from agents.planning.sources import repos_by_owner as repos_by_owner
from agents.planning.sources import role_identity as role_identity
from agents.redact import redact, redact_obj

if TYPE_CHECKING:
    from agents.ratelimit.github.snapshot import IdentitySnapshot
    from agents.store.store import Store
    from agents.wiring import Runtime
    from flows.run.report import RunReport

log = logging.getLogger("flows.run.adapters")
# Why a run, and the workers it left, ended when it was interrupted: how `swarm run` tells them.
INTERRUPTED = "interrupted before it ended (Ctrl-C, or the flow run was cancelled)"


# A live worker appends an event every turn, which refreshes its heartbeat; an hour of silence
# (or a dead process on this host) means it crashed.
STALE_WORKER_AFTER = timedelta(hours=1)


def start_store_run(
    runtime: Runtime, *, trigger: str, flow_run_id: str | None, asked: Mapping[str, Any]
) -> str:
    """The run's row, with what was ``asked`` (``RunRequest.kept``): a run that ends without a
    report (an error, Ctrl-C) still says which role it ran, for ``swarm run --retry``."""
    # Workers an earlier run left "running" (process killed) are marked failed, not left forever.
    for worker_id in runtime.store.mark_stale_workers_failed(STALE_WORKER_AFTER):
        log.warning("worker %s of an earlier run had crashed; marked failed", worker_id)
    totals = {"asked": dict(asked)}
    if flow_run_id:
        # A flow run resumed after waiting for a maintainer (plan approval) runs again from the
        # start: it takes up its own row again rather than leaving it "waiting" beside a new one.
        earlier = runtime.store.run_for_flow_run(str(flow_run_id))
        if earlier is not None and earlier.status == "waiting":
            runtime.store.set_run_waiting(earlier.id, False)
            return earlier.id
    return str(runtime.store.create_run(trigger, prefect_flow_run_id=flow_run_id, totals=totals))


def abandon_store_run(store: Store, run_id: str, exc: BaseException) -> None:
    """The run ends without a report (an error, Ctrl-C, a cancelled flow run): the run and every
    worker it left pending or running end with it, saying why, so none stays "running". Queued
    behind the workers' own writes, so a worker's last row update cannot land after it."""
    from functools import partial

    interrupted = isinstance(exc, (KeyboardInterrupt, asyncio.CancelledError))
    if interrupted:
        reason = INTERRUPTED
    else:
        first = (redact(str(exc)).strip().splitlines() or [""])[0]
        reason = f"the run failed: {type(exc).__name__}: {first}"
    status: Literal["failed", "cancelled"] = "cancelled" if interrupted else "failed"
    try:
        store.writer.write(run_id, partial(store.abandon_run, run_id, reason, status=status))
        store.writer.flush(run_id)
    except Exception as problem:  # the store itself may be what failed
        log.warning("run %s could not be marked %s: %s", run_id, status, redact(str(problem)))


def finish_store_run(
    store: Store, run_id: str, report: RunReport, asked: Mapping[str, Any]
) -> None:
    status = "succeeded" if report.ok else "partial"
    if report.outcomes and all(o.status in ("blocked", "failed") for o in report.outcomes):
        status = "failed"
    if report.not_open and not report.outcomes:
        status = "failed"  # asked for by name, and nothing of it was there to do
    totals = {
        "workers": len(report.outcomes),
        "new_reviews": report.new_reviews,
        "already_reviewed": report.idempotent_skips,
        "failed": len(report.failed),
        "github_calls": sum(o.github_calls for o in report.outcomes),
        "cost_usd": round(sum(o.cost_usd for o in report.outcomes), 6),
        "dry_run": report.dry_run,
        # The whole report, so a parent run on another machine can aggregate it (redacted by
        # the store like every JSON column).
        "report": report.model_dump(mode="json"),
        "asked": dict(asked),
    }
    store.finish_run(run_id, status, totals)


async def bucket_snapshots(runtime: Runtime) -> dict[str, Any]:
    """Each used identity's buckets as plain, redacted data; also recorded in the store."""
    out: dict[str, Any] = {}
    try:
        snapshots = await runtime.snapshots()
    except Exception as exc:
        log.warning("bucket snapshots failed: %s", exc)
        return out
    for snap in snapshots:
        data = snap.model_dump(mode="json")
        out[str(snap.identity)] = redact_obj(data)
        _record_snapshot(runtime, snap)
    return out


def _record_snapshot(runtime: Runtime, snap: IdentitySnapshot) -> None:
    """Keep the end-of-run budget per identity and resource, for ``swarm limits`` and audit."""
    try:
        for name, budget in snap.resources.items():
            runtime.store.record_rate_limit_snapshot(
                identity=snap.identity,
                resource=name,
                limit=budget.limit,
                remaining=budget.remaining,
                reset_at=budget.reset,
                paused_until=snap.paused_until,
                by_worker=dict(snap.requests_by_worker),
            )
    except Exception as exc:
        log.warning("recording the bucket snapshot of %s failed: %s", snap.identity, exc)
