"""The ``swarm-run`` flow: discover -> plan -> dispatch -> fan out workers -> summarize -> publish.

The flow stays thin: discovery and sharding live in :mod:`agents.planning.discover` and
:mod:`agents.planning.shards`, the worker in :mod:`agents.worker`, minting and sealing in the
dispatcher. What the flow adds is what Prefect is good at: every worker is a task run with a
readable name and tags, its state says how it ended (a blocked worker is a FAILED task run
carrying its reason), progress and results are artifacts,
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
from typing import TYPE_CHECKING, Any

from prefect import flow
from prefect.artifacts import (
    acreate_markdown_artifact,
    acreate_progress_artifact,
    acreate_table_artifact,
)
from prefect.client.schemas.objects import State
from prefect.exceptions import Pause
from prefect.runtime import deployment as runtime_deployment
from prefect.runtime import flow_run as runtime_flow_run
from prefect.states import Completed, Failed

from agents.planning.costs import CostCap
from agents.redact import redact
from agents.work import WorkWords
from flows.run.adapters import (
    abandon_store_run,
    bucket_snapshots,
    finish_store_run,
    start_store_run,
)
from flows.run.bot import acknowledge
from flows.run.children import fan_out_report
from flows.run.deployed import rename_run, run_name, scheduled_tick_overlaps
from flows.run.discovery import (
    config_problems,
    config_skips,
    discover,
    left_alone,
    read_plan,
    refusals,
)
from flows.run.fanout import Fanout
from flows.run.gate import Gated, expire_gates, through_gates
from flows.run.logs import project_logs_in_run
from flows.run.notes import note_previews, post_pr_notes
from flows.run.pages import publish_identities, workers_section
from flows.run.report import (
    RunReport,
    RunTimings,
    artifact_row,
    markdown_summary,
    paused_identities,
)
from flows.run.request import RunRequest
from flows.run.spend import announce_estimate

if TYPE_CHECKING:
    from agents.settings.model import Settings
    from agents.wiring import Runtime

log = logging.getLogger("flows.run.flow")


def _flow_run_name() -> str:
    asked = RunRequest.of_parameters(runtime_flow_run.parameters)
    repos = asked.targets or asked.repos or ["configured repos"]
    name = run_name(asked.role, repos, asked.dry_run)
    return name + (" (forced)" if asked.force else "")


@flow(name="swarm-run", flow_run_name=_flow_run_name, log_prints=False)
async def swarm_run(request: RunRequest = RunRequest()) -> State[RunReport]:
    """Review every open PR of ``repos`` that ``role`` has not reviewed at its head SHA
    (the fields of ``request``, a :class:`~flows.run.request.RunRequest`).

    Started from a deployment over several repositories (and ``fan_out``), the run starts one
    child run per repository on the work pool and reports over them (:mod:`flows.run.children`).
    With ``max_cost`` (USD) no worker starts once what the run spent plus what its running
    workers hold would pass it; the report names the PRs left and why (a run that fans out to
    child runs does not pass the cap on: it holds for ``swarm run``, one process).
    ``targets`` (``OWNER/NAME#N``) narrows the run to those pull requests (their repositories
    need not be in ``repos``; such a run never fans out). ``force`` reviews them even at an
    already reviewed head: a new review marked as a re-review, keyed by ``rerun_id`` (default:
    this flow run's id), so the same forced request retried posts it once. ``ack_comment``:
    the ``/swarm`` command comment that asked for this run; it gets a rocket (or confused)
    reaction when the run ends; ``focus``: a role its focus lays over the calls of ``role``'s
    workers (a call overlay, above ``overlay``'s session overlay).
    Ends COMPLETED when every worker succeeded, skipped or waits on a paused identity, and
    FAILED (after publishing everything) when a worker was blocked or failed, so flow retries
    and alerts see it. Either way the state's result is the :class:`RunReport`.
    """
    from agents.settings.model import load_settings

    wanted = request.pull_requests()
    repos = list(dict.fromkeys(r for r, _ in wanted)) if wanted else list(request.repos or ())
    overrides: dict[str, Any] = {"repos": repos} if repos else {}
    if request.max_workers:
        overrides["max_workers"] = request.max_workers
    if request.model:
        overrides["model"] = request.model
    settings = load_settings(**overrides)
    with project_logs_in_run(settings.log_level):
        deployment_id = runtime_deployment.id
        if deployment_id:
            flow_run_id = str(runtime_flow_run.id)
            if await scheduled_tick_overlaps(flow_run_id, deployment_id):
                log.info("an earlier run of this deployment is still going; tick skipped")
                return Completed(name="Skipped", message="an earlier run is still going")
            if not repos:
                await rename_run(
                    flow_run_id, run_name(request.role, settings.repos, request.dry_run)
                )
            if request.fan_out and not wanted and len(settings.repos) > 1:
                return await _fan_out(settings, deployment_id, flow_run_id, request)
        return await _run_swarm(settings, request, wanted)


async def _run_swarm(
    settings: Settings, request: RunRequest, targets: list[tuple[str, int]]
) -> State[RunReport]:
    from agents.kinds.book import RoleBook
    from agents.planning.shards import ShardCuts, plan_assignments, too_large_notes
    from agents.wiring import build_runtime
    from flows.run.models import open_model

    if not settings.repos:
        raise ValueError("no repositories to work on: pass repos or set SWARM_REPOS")
    role, dry_run, model = request.role, request.dry_run, request.model
    # A forced re-review is keyed by its request (default: this flow run), so a retry posts once.
    rerun = (request.rerun_id or str(runtime_flow_run.id or "forced")) if request.force else None
    started = time.perf_counter()
    chosen = open_model(settings, model)
    try:
        runtime = build_runtime(settings, chosen.client, chosen.model_id, dry_run=dry_run)
    except BaseException:
        await chosen.client.aclose()
        raise
    trigger = "retry" if request.retry_of else "flow"
    asked = request.kept()
    run_id = start_store_run(runtime, trigger=trigger, flow_run_id=runtime_flow_run.id, asked=asked)
    summarizer = request.summarizer_role or RoleBook(runtime.roles).role_for("summarize")
    run_kind = RoleBook(runtime.roles).kind_of(role)
    gated_kind = run_kind is not None and run_kind.plan_approval
    try:
        if gated_kind and not dry_run:
            await _expire_gates(runtime)
        found = await discover(runtime, settings.repos, role, summarizer, targets or None, rerun)
        discovered = time.perf_counter()
        plan = plan_assignments(
            found.items,
            role,
            sizes=found.sizes,
            read=read_plan(runtime, request.role),
            summarizer_role=summarizer,
            replies=found.replies,
            reply_role=found.reply_role,
            cuts=ShardCuts(threshold_files=request.shard_threshold_files, size=request.shard_size),
        )
        # A PR that cannot fit its caps says so now, before any model call.
        notes = [*found.notes, *too_large_notes(plan, role)]
        plan = [p for p in plan if p.too_large is None]
        total = sum(len(p.assignments) for p in plan)
        # With nothing found at all (a --pr that is not open) the run's end says it all.
        if plan or found.items or found.skipped:
            words = kind.words if (kind := RoleBook(runtime.roles).kind_of(role)) else WorkWords()
            log.info(
                "swarm %s: %d %s with %d worker(s); %d %s",
                run_id,
                len(plan),
                words.items,
                total,
                found.already_reviewed,
                words.done,
            )
        estimate, expected = announce_estimate(runtime, plan)
        cap = CostCap(request.max_cost)
        fanout = Fanout(run_id, runtime, settings.max_workers, total, cap, expected)
        overlays = (request.overlay, request.focus)  # session, call
        fanout.overlays = {role: overlays} if any(overlays) else {}
        fanout.progress_id = await acreate_progress_artifact(
            progress=0.0 if total else 100.0,
            key="swarm-progress",
            description=f"0 of {total} workers finished",
        )
        gated = Gated(planned=list(plan))
        if gated_kind:
            # Plan approval, where a repository asks for it: may suspend this flow run.
            gated = await through_gates(runtime, fanout, plan, role, run_id, asked=bool(targets))
        per_pr = await asyncio.gather(*(fanout.run_pr(p) for p in gated.planned))
        await fanout.settle()
        outcomes = [*gated.outcomes, *(o for group in per_pr for o in group)]
        notes += fanout.notes
        noted = await post_pr_notes(runtime, role, notes)
        kind = RoleBook(runtime.roles).kind_of(role)
        report = RunReport(
            run_id=run_id,
            role=role,
            repos=list(settings.repos),
            words=kind.words if kind is not None else WorkWords(),
            refused=refusals(found),
            dry_run=dry_run,
            model=model or settings.model,
            discovered=len(found.items),
            already_reviewed=found.already_reviewed,
            drafts_skipped=sum(1 for s in found.skipped if s.reason == "draft"),
            unreadable=[f"{s.where}: {redact(s.detail or '')}" for s in found.unreadable],
            not_open=found.not_found(targets or ()),
            skipped=config_skips(found),
            left_alone=left_alone(found),
            config_errors=config_problems(found),
            config_told=found.config_told,
            outcomes=outcomes,
            paused=paused_identities(outcomes),
            estimate=estimate.line(),
            max_cost_usd=request.max_cost,
            left_by_cost_cap=fanout.left_out,
            notes=[f"{n.label}: {redact(n.reason)}" for n in notes],
            note_previews=note_previews(notes) if dry_run else {},
            settled=[*fanout.settled, *noted],
            cost_cap_reason=cap.reason() if fanout.left_out else None,
            buckets=await bucket_snapshots(runtime),
            writes=runtime.writes.tally(),
            store_location=_store_location(settings.resolved_store_url()),
            timings=RunTimings(
                setup_and_discovery_s=discovered - started,
                dispatch_s=fanout.dispatch_s,
                worker_s=fanout.worker_s,
                task_runs_s=fanout.task_s,
                wall_s=time.perf_counter() - started,
            ),
        )
        await _publish(report, fanout)
        finish_store_run(runtime.store, run_id, report, asked)
        if request.ack_comment is not None and targets:
            await acknowledge(runtime, role, targets[0][0], request.ack_comment, report.ok)
        if report.ok:
            return Completed(message=report.headline(), data=report)
        return Failed(message=report.headline(), data=report)
    except Pause:
        # Suspended for a maintainer's decision (flows.run.gate): the row says "waiting", and
        # the resumed run takes it up again; not abandoned.
        raise
    except BaseException as exc:
        abandon_store_run(runtime.store, run_id, exc)  # never a run left "running"
        raise
    finally:
        await runtime.aclose()


async def _fan_out(
    settings: Settings, deployment_id: str, flow_run_id: str, request: RunRequest
) -> State[RunReport]:
    from agents.store.store import Store

    store = Store.open(settings.store_url, settings.data_dir)
    try:
        report = await fan_out_report(
            store,
            deployment_id=deployment_id,
            parent_flow_run_id=flow_run_id,
            request=request,
            repos=settings.repos,
            model=request.model or settings.model,
        )
    finally:
        store.close()
    await _publish(report, None)
    if report.ok:
        return Completed(message=report.headline(), data=report)
    return Failed(message=report.headline(), data=report)


async def _expire_gates(runtime: Runtime) -> None:
    """Plan approvals that waited past their time end here, said on their issues (a timeout
    runs none of the waiting run's code); a failure is the next run's to retry."""
    try:
        ended = await expire_gates(runtime)
    except Exception as exc:
        log.warning("waiting plans not checked: %s", redact(str(exc)))
        return
    for label in ended:
        log.info("%s: plan approval timed out; nothing written", label)


def _store_location(url: str) -> str:
    """Where the store lives, without a password if the URL carries one."""
    return redact(url)


async def _publish(report: RunReport, fanout: Fanout | None) -> None:
    """The run's artifacts; a fan-out parent has no workers of its own (``fanout`` None): each
    worker's page is in its child run."""
    rows = [
        artifact_row(o, fanout.page_of(o) if fanout else "see its child run")
        for o in report.outcomes
    ]
    await acreate_table_artifact(
        table=rows or [{"worker": "-", "outcome": "no work: every open PR is up to date"}],
        key="swarm-workers",
        description=f"Workers of swarm run {report.run_id}: {report.headline()}",
    )
    await acreate_markdown_artifact(
        markdown=redact(
            markdown_summary(report) + (workers_section(fanout.pages) if fanout else "")
        ),
        key="swarm-summary",
        description=report.headline(),
    )
    await publish_identities(report.buckets)
