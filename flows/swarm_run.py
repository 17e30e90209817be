"""The ``swarm-run`` flow: discover -> plan -> dispatch -> fan out workers -> summarize -> publish.

The flow stays thin: discovery and sharding live in :mod:`agents.planning`, the worker in
:mod:`agents.worker`, minting and sealing in the dispatcher. What the flow adds is what Prefect is
good at: every worker is a task run with a readable name and tags, its state says how it ended
(a blocked worker is a FAILED task run carrying its reason), progress and results are artifacts,
and the project's logs land in the run logs, redacted.

Workers are tasks, not subflows (a few ms of orchestration each instead of about a second), and
are awaited directly in this flow's event loop under a semaphore, so they share the runtime's
gateways, throttles and store without crossing threads. Only sealed envelopes travel as task
parameters; the raw token never does.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING, Any, cast

from prefect import flow, task
from prefect.artifacts import (
    acreate_markdown_artifact,
    acreate_progress_artifact,
    acreate_table_artifact,
    aupdate_progress_artifact,
)
from prefect.cache_policies import NO_CACHE
from prefect.client.schemas.objects import State
from prefect.runtime import flow_run as runtime_flow_run
from prefect.states import Cancelled, Completed, Failed

from agents.outcome import WorkerOutcome
from agents.planning import (
    Assignment,
    Discovery,
    PlannedPR,
    SkippedItem,
    WorkItem,
    discover_work,
)
from agents.redact import redact
from flows.logs import bridge_project_logs
from flows.report import PausedIdentity, RunReport, RunTimings, markdown_summary, outcome_row
from flows.runtime_glue import (
    GatewayPullSource,
    StoreLedger,
    bucket_snapshots,
    finish_store_run,
    repos_by_owner,
    role_identity,
    start_store_run,
)

if TYPE_CHECKING:
    from agents.wiring import Runtime

log = logging.getLogger("flows.swarm_run")

# Runtimes of the flow runs alive in this process, by swarm run id. Tasks look theirs up here
# instead of receiving it as a parameter: a runtime holds clients and keys, never a parameter.
_RUNTIMES: dict[str, Runtime] = {}
# Seconds spent inside run_worker, per swarm run: the rest of a task run's time is orchestration.
_WORKER_SECONDS: dict[str, float] = {}


class WorkerCrashed(RuntimeError):
    """A worker raised instead of returning an outcome; the message is already redacted."""


def _flow_run_name() -> str:
    params = runtime_flow_run.parameters or {}
    repos = params.get("repos") or ["configured repos"]
    role = params.get("role", "reviewer")
    suffix = " (dry run)" if params.get("dry_run") else ""
    return f"swarm {role} over {', '.join(repos)}{suffix}"


def _worker_state(outcome: WorkerOutcome) -> State[Any]:
    """The task run state people see in the UI for each way a worker can end."""
    message = f"{outcome.target}: {outcome.status}" + (
        f": {outcome.reason}" if outcome.reason else ""
    )
    if outcome.status == "succeeded":
        return Completed(message=message, data=outcome)
    if outcome.status == "skipped":
        return Completed(name="Skipped", message=message, data=outcome)
    if outcome.status == "paused":
        return Cancelled(name="Paused", message=message, data=outcome)
    name = {"blocked": "Blocked", "budget_exhausted": "BudgetExhausted"}.get(
        outcome.status, "Failed"
    )
    return Failed(name=name, message=message, data=outcome)


@task(name="swarm-worker", cache_policy=NO_CACHE, persist_result=False)
async def worker_task(
    run_id: str,
    sealed: Any,
    role: str,
    target: str,
    blocked_reason: str | None = None,
) -> State[Any]:
    """Run one worker from its sealed envelope and turn its outcome into a task state."""
    if sealed is None:
        return _worker_state(
            WorkerOutcome(
                worker_id="-", role=role, target=target, status="blocked", reason=blocked_reason
            )
        )
    from agents.worker import run_worker

    runtime = _RUNTIMES[run_id]
    started = time.perf_counter()
    try:
        outcome = await run_worker(sealed, runtime)
    except Exception as exc:
        # Prefect stores the exception text in the task state: it must be redacted first.
        raise WorkerCrashed(f"{type(exc).__name__}: {redact(str(exc))}") from None
    finally:
        _WORKER_SECONDS[run_id] = _WORKER_SECONDS.get(run_id, 0.0) + (time.perf_counter() - started)
    return _worker_state(outcome)


async def _outcome_from_state(
    state: State[Any], assignment: Assignment, worker_id: str
) -> WorkerOutcome:
    data = await state.aresult(raise_on_failure=False)
    if isinstance(data, WorkerOutcome):
        return data
    reason = redact(str(data)) if isinstance(data, BaseException) else (state.message or "")
    return WorkerOutcome(
        worker_id=worker_id,
        role=assignment.role,
        target=f"{assignment.pr}@{assignment.head_sha[:7]}",
        status="failed",
        reason=f"crashed: {reason}",
    )


class _Fanout:
    """Dispatches and runs workers under one concurrency cap, counting progress as they end."""

    def __init__(self, run_id: str, runtime: Runtime, max_workers: int, total: int) -> None:
        self.run_id = run_id
        self.runtime = runtime
        self.limit = asyncio.Semaphore(max_workers)
        self.total = max(total, 1)
        self.done = 0
        self.progress_id: uuid.UUID | None = None
        self.dispatch_s = 0.0
        self.task_s = 0.0

    async def run(
        self, assignment: Assignment, parents: Sequence[WorkerOutcome] = ()
    ) -> WorkerOutcome:
        from agents.dispatch import WorkTask

        identity = role_identity(self.runtime, assignment.role)
        target = f"{assignment.pr}@{assignment.head_sha[:7]}"
        tags = [f"role:{assignment.role}", f"identity:{identity}", f"repo:{assignment.repo}"]
        runner = worker_task.with_options(task_run_name=assignment.run_name, tags=tags)
        async with self.limit:
            sealed: Any = None
            blocked: str | None = None
            started = time.perf_counter()
            try:
                findings = [f for parent in parents for f in parent.findings]
                work = WorkTask(**assignment.task_fields(findings))
                sealed = await self.runtime.dispatcher.dispatch(self.run_id, work, assignment.role)
            except Exception as exc:
                blocked = f"BLOCKED: dispatch refused: {redact(str(exc))}"
                log.warning("%s: %s", assignment.run_name, blocked)
            dispatched = time.perf_counter()
            self.dispatch_s += dispatched - started
            try:
                pending = runner(
                    self.run_id,
                    sealed,
                    assignment.role,
                    target,
                    blocked_reason=blocked,
                    return_state=True,
                )
                state = await cast(Awaitable[State[Any]], pending)
                self.task_s += time.perf_counter() - dispatched
            finally:
                if sealed is not None:
                    await self._release(sealed, assignment)
        worker_id = str(getattr(sealed, "worker_id", "-")) if sealed is not None else "-"
        outcome = await _outcome_from_state(state, assignment, worker_id)
        await self._tick()
        return outcome

    async def _release(self, sealed: Any, assignment: Assignment) -> None:
        try:
            await self.runtime.dispatcher.release(sealed)
        except Exception as exc:
            log.warning("%s: revoking its token failed: %s", assignment.run_name, redact(str(exc)))

    async def _tick(self) -> None:
        self.done += 1
        if self.progress_id is not None:
            await aupdate_progress_artifact(
                self.progress_id,
                progress=100.0 * self.done / self.total,
                description=f"{self.done} of {self.total} workers finished",
            )

    async def run_pr(self, planned: PlannedPR) -> list[WorkerOutcome]:
        outcomes = list(await asyncio.gather(*(self.run(a) for a in planned.reviewers)))
        if planned.summarizer is None:
            return outcomes
        if all(o.status == "succeeded" for o in outcomes):
            outcomes.append(await self.run(planned.summarizer, outcomes))
            return outcomes
        unfinished = sum(1 for o in outcomes if o.status != "succeeded")
        s = planned.summarizer
        outcomes.append(
            WorkerOutcome(
                worker_id="-",
                role=s.role,
                target=f"{s.pr}@{s.head_sha[:7]}",
                status="failed",
                reason=(
                    f"not summarized: {unfinished} of {len(planned.reviewers)} shards did not "
                    "finish; nothing posted, the next run retries this PR"
                ),
            )
        )
        await self._tick()
        return outcomes


@flow(name="swarm-run", flow_run_name=_flow_run_name, log_prints=False)
async def swarm_run(
    repos: list[str] | None = None,
    role: str = "reviewer",
    max_workers: int | None = None,
    dry_run: bool = False,
    model: str | None = None,
    shard_threshold_files: int = 40,
    shard_size: int = 20,
    summarizer_role: str = "summarizer",
) -> State[Any]:
    """Review every open PR of ``repos`` that ``role`` has not reviewed at its head SHA.

    Ends COMPLETED when every worker succeeded, skipped or waits on a paused identity, and
    FAILED (after publishing everything) when a worker was blocked or failed, so flow retries
    and alerts see it. Either way the state's result is the :class:`RunReport`.
    """
    from agents.config import load_settings
    from agents.planning import plan_assignments
    from agents.wiring import build_runtime

    bridge_project_logs()
    overrides: dict[str, Any] = {}
    if repos:
        overrides["repos"] = repos
    if max_workers:
        overrides["max_workers"] = max_workers
    if model:
        overrides["model"] = model
    settings = load_settings(**overrides)
    if not settings.repos:
        raise ValueError("no repositories to work on: pass repos or set SWARM_REPOS")
    started = time.perf_counter()
    runtime = build_runtime(settings, model=model, dry_run=dry_run)
    run_id = start_store_run(runtime, trigger="flow", flow_run_id=runtime_flow_run.id)
    _RUNTIMES[run_id] = runtime
    try:
        found = await _discover(runtime, settings.repos, role, summarizer_role)
        discovered = time.perf_counter()
        plan = plan_assignments(
            found.items,
            role,
            shard_threshold_files=shard_threshold_files,
            shard_size=shard_size,
            summarizer_role=summarizer_role,
        )
        total = sum(len(p.assignments) for p in plan)
        log.info(
            "swarm %s: %d PR(s) to review with %d worker(s); %d already reviewed at head SHA",
            run_id,
            len(plan),
            total,
            found.already_reviewed,
        )
        fanout = _Fanout(run_id, runtime, settings.max_workers, total)
        fanout.progress_id = await acreate_progress_artifact(
            progress=0.0 if total else 100.0,
            key="swarm-progress",
            description=f"0 of {total} workers finished",
        )
        per_pr = await asyncio.gather(*(fanout.run_pr(p) for p in plan))
        outcomes = [o for group in per_pr for o in group]
        report = RunReport(
            run_id=run_id,
            role=role,
            repos=list(settings.repos),
            dry_run=dry_run,
            model=model or settings.model,
            discovered=len(found.items),
            already_reviewed=found.already_reviewed,
            drafts_skipped=sum(1 for s in found.skipped if s.reason == "draft"),
            unreadable=[f"{s.repo}#{s.number}: {redact(s.detail or '')}" for s in found.unreadable],
            outcomes=outcomes,
            paused=_paused(outcomes),
            buckets=await bucket_snapshots(runtime),
            store_location=_store_location(settings.resolved_store_url()),
            timings=RunTimings(
                setup_and_discovery_s=discovered - started,
                dispatch_s=fanout.dispatch_s,
                worker_s=_WORKER_SECONDS.get(run_id, 0.0),
                task_runs_s=fanout.task_s,
                wall_s=time.perf_counter() - started,
            ),
        )
        await _publish(report)
        finish_store_run(runtime, run_id, report)
        if report.ok:
            return Completed(message=report.headline(), data=report)
        return Failed(message=report.headline(), data=report)
    finally:
        _RUNTIMES.pop(run_id, None)
        _WORKER_SECONDS.pop(run_id, None)
        await runtime.aclose()


async def _discover(
    runtime: Runtime, repos: Sequence[str], role: str, summarizer_role: str
) -> Discovery:
    """Open PRs needing ``role``'s review, read as the role's bot (never the maintainer)."""
    identity = role_identity(runtime, role)
    ledger = StoreLedger(runtime.store)
    items: list[WorkItem] = []
    skipped: list[SkippedItem] = []
    for owned in repos_by_owner(repos).values():
        async with runtime.discovery(identity, owned) as gateway:
            found = await discover_work(
                GatewayPullSource(gateway),
                owned,
                role,
                ledger,
                posting_roles=(summarizer_role,),
            )
        items += found.items
        skipped += found.skipped
    return Discovery(items=items, skipped=skipped)


def _paused(outcomes: Sequence[WorkerOutcome]) -> list[PausedIdentity]:
    by_identity: dict[str, PausedIdentity] = {}
    for o in outcomes:
        if o.status != "paused":
            continue
        name = o.identity_login or o.role
        seen = by_identity.get(name)
        until = o.paused_until
        if seen is not None and seen.paused_until and until:
            until = max(until, seen.paused_until)
        by_identity[name] = PausedIdentity(
            identity=name, paused_until=until, workers=(seen.workers if seen else 0) + 1
        )
    return list(by_identity.values())


def _store_location(url: str) -> str:
    """Where the store lives, without a password if the URL carries one."""
    return redact(url)


async def _publish(report: RunReport) -> None:
    rows = [outcome_row(o) for o in report.outcomes]
    await acreate_table_artifact(
        table=rows or [{"worker": "-", "outcome": "no work: every open PR is up to date"}],
        key="swarm-workers",
        description=f"Workers of swarm run {report.run_id}: {report.headline()}",
    )
    await acreate_markdown_artifact(
        markdown=redact(markdown_summary(report)),
        key="swarm-summary",
        description=report.headline(),
    )
