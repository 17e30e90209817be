"""Fan one run out across machines: a child flow run per repository, through the deployment.

A flow run lives in one process, so a run over many repositories would be one process on one
machine however many ``prefect worker``s serve the pool. When a run started from a deployment
covers more than one repository, it starts one child run of the same deployment per repository
(the work pool hands each to whichever worker has room), waits for them, and reads each child's
report back from the shared store: a child's Prefect result lives on the machine that ran it,
the store is what every machine shares.

Children are subflows in the UI (the tree shows under the parent), named after the repository
and tagged ``swarm-child``. Their idempotency keys derive from the parent's flow-run id, so a
retried parent waits on the children it already started instead of starting them again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from prefect.client.schemas.objects import FlowRun
from prefect.deployments import arun_deployment

from agents.github.writes import WriteTally
from agents.store.store import Store
from agents.work import WorkWords
from flows.run.report import RunReport, RunTimings
from flows.run.request import RunRequest

log = logging.getLogger("flows.run.children")

# How often a waiting parent asks the API about its children; a child takes seconds at least.
POLL_INTERVAL_S = 2.0


@dataclass(frozen=True)
class ChildRun:
    """One child flow run and the report its run left in the store (None when it left none)."""

    repo: str
    flow_run_id: str
    state: str
    report: RunReport | None


async def run_children(
    deployment_id: str,
    parent_flow_run_id: str,
    request: RunRequest,
    repos: Sequence[str],
    store: Store,
) -> list[ChildRun]:
    """Start one child run per repository, wait for all, and read back their reports."""

    async def one(repo: str) -> ChildRun:
        flow_run: FlowRun = await arun_deployment(
            deployment_id,
            parameters=request.for_child(repo, len(repos)).parameters(),
            flow_run_name=f"swarm {request.role} over {repo}",
            tags=["swarm-child", f"repo:{repo}"],
            idempotency_key=f"{parent_flow_run_id}:{repo}",
            timeout=None,
            poll_interval=POLL_INTERVAL_S,
            as_subflow=True,
        )
        state = (flow_run.state.name or flow_run.state.type.value) if flow_run.state else "unknown"
        return ChildRun(repo, str(flow_run.id), state, child_report(store, str(flow_run.id), state))

    children = await asyncio.gather(*(one(repo) for repo in repos))
    for child in children:
        log.info(
            "child run %s over %s ended %s%s",
            child.flow_run_id,
            child.repo,
            child.state,
            f": {child.report.headline()}" if child.report else " without a report",
        )
    return list(children)


def child_report(store: Store, flow_run_id: str, state: str) -> RunReport | None:
    """The child's report; a child whose flow run is over but whose store run is still
    "running" died with its process (a killed machine): its run and workers are failed now,
    from whichever machine the parent is on, so the review keys they claimed are free for the
    next run at once instead of after the heartbeat timeout."""
    record = store.run_for_flow_run(flow_run_id)
    if record is None:
        return None
    if "report" in record.totals:
        return RunReport.model_validate(record.totals["report"])
    if record.status == "running":
        reason = f"stale: its flow run {flow_run_id} ended {state} without finishing"
        for worker_id in store.abandon_run(record.id, reason):
            log.warning(
                "worker %s of child run %s died with it; marked failed", worker_id, record.id
            )
    return None


def merged_report(
    run_id: str, role: str, dry_run: bool, model: str, children: Sequence[ChildRun]
) -> RunReport:
    """One report over every child's; a child that left none is reported as unreadable, so
    the parent fails and the next run picks those PRs up."""
    reports = [c.report for c in children if c.report is not None]
    missing = [
        f"{c.repo}: child run {c.flow_run_id} ended {c.state} without a report"
        for c in children
        if c.report is None
    ]
    buckets: dict[str, Any] = {}
    writes = reports[0].writes if reports else WriteTally()
    for r in reports:
        buckets.update(r.buckets)
    for r in reports[1:]:
        writes = writes.merged(r.writes)
    return RunReport(
        run_id=run_id,
        role=role,
        repos=[c.repo for c in children],
        words=reports[0].words if reports else WorkWords(),
        refused=[r for report in reports for r in report.refused],
        dry_run=dry_run,
        model=model,
        discovered=sum(r.discovered for r in reports),
        already_reviewed=sum(r.already_reviewed for r in reports),
        drafts_skipped=sum(r.drafts_skipped for r in reports),
        unreadable=[u for r in reports for u in r.unreadable] + missing,
        skipped=[s for r in reports for s in r.skipped],
        left_alone=[s for r in reports for s in r.left_alone],
        left_by_cost_cap=[s for r in reports for s in r.left_by_cost_cap],
        notes=[n for r in reports for n in r.notes],
        config_errors=[e for r in reports for e in r.config_errors],
        config_told=[t for r in reports for t in r.config_told],
        outcomes=[o for r in reports for o in r.outcomes],
        paused=[p for r in reports for p in r.paused],
        buckets=buckets,
        writes=writes,
        store_location=reports[0].store_location if reports else None,
        timings=RunTimings(
            worker_s=sum(r.timings.worker_s for r in reports),
            task_runs_s=sum(r.timings.task_runs_s for r in reports),
        ),
    )


async def fan_out_report(
    store: Store,
    *,
    deployment_id: str,
    parent_flow_run_id: str,
    request: RunRequest,
    repos: Sequence[str],
    model: str,
) -> RunReport:
    """The parent's whole run: its store row, the children, and one report over them."""
    from flows.run.adapters import finish_store_run

    asked = request.kept()
    run_id = store.create_run(
        "flow-parent", prefect_flow_run_id=parent_flow_run_id, totals={"asked": asked}
    )
    log.info("swarm %s: %d repositories, one child run each", run_id, len(repos))
    children = await run_children(deployment_id, parent_flow_run_id, request, repos, store)
    report = merged_report(run_id, request.role, request.dry_run, model, children)
    finish_store_run(store, run_id, report, asked)
    return report
