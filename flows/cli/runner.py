"""Running the ``swarm-run`` flow once from the command line and printing what it did."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

import typer

from agents.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from flows.local.env import prepare_prefect_env
from flows.local.prefect_server import use_local_prefect
from flows.run.report import RunReport
from flows.run.request import RunRequest

if TYPE_CHECKING:
    from prefect.client.schemas.objects import State

    from agents.planning.costs import RunEstimate
    from agents.settings.model import Settings

# Worker statuses of work not ended (the interrupted ones end failed, with INTERRUPTED as reason).
UNFINISHED = frozenset({"pending", "running"})


def execute_flow(request: RunRequest) -> RunReport:
    """Run the flow in this process against the configured or local Prefect server, with a
    progress bar over its workers."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from flows.cli.console import console
    from flows.cli.errors import DEBUG
    from flows.cli.options import VERBOSE
    from flows.local.env import hide_console_tracebacks, quiet_console
    from flows.run.fanout import watching_progress
    from flows.run.flow import swarm_run
    from flows.run.spend import watching_estimate

    if not DEBUG.on:
        hide_console_tracebacks()
    if not VERBOSE.on:
        quiet_console()

    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=console,
        transient=True,
    ) as progress:
        bar = progress.add_task("discovering work", total=None)

        def advance(done: int, total: int) -> None:
            progress.update(bar, description="workers", completed=done, total=total)

        def told(estimate: RunEstimate) -> None:
            if estimate.prs:  # with nothing to do, the headline says so
                progress.console.print(estimate.line(), markup=False, highlight=False)

        since = datetime.now(UTC)
        with watching_progress(advance), watching_estimate(told):
            pending = swarm_run(request, return_state=True)
            try:
                state = asyncio.run(cast("Coroutine[Any, Any, State[Any]]", pending))
            except KeyboardInterrupt:
                progress.stop()
                tell_interrupted(since, planned=progress.tasks[0].total)
                raise
    result = state.result(raise_on_failure=False)
    if isinstance(result, RunReport):
        return result.model_copy(update={"ui_link": flow_run_link(state)})
    if isinstance(result, BaseException):
        raise result
    raise RuntimeError(f"swarm-run ended {state.name} without a report: {state.message}")


def tell_interrupted(since: datetime, planned: float | None) -> None:
    """After Ctrl-C: what the run did and what it left, from the store (the flow has ended the
    workers it left as cancelled), so a person knows where things stand."""
    from agents.settings.model import load_settings
    from agents.store import Store
    from agents.store.runs import LEFT_AFTER_WRITE
    from flows.cli.console import say
    from flows.cli.store_actions import task_label

    settings = load_settings()
    store = Store.open(settings.store_url, settings.data_dir)
    try:
        runs = [r for r in store.list_runs(limit=10) if r.started_at >= since]
        run = runs[-1] if runs else None  # the first run this command started
        workers = store.list_workers(run_id=run.id) if run else []
        posted = store.posted_by([w.id for w in workers])
        unfinished = {
            w for w, left in store.posted_writers([w.id for w in workers]).items() if left
        }
    finally:
        store.close()
    if run is None:
        say("interrupted before any work started: nothing was done")
        return
    from flows.run.adapters import INTERRUPTED

    left = [w for w in workers if w.status in UNFINISHED or w.blocked_reason == INTERRUPTED]
    done = [w for w in workers if w not in left]
    total = int(planned or 0) or len(workers)
    say(f"interrupted: run {run.id} is {run.status}; {len(done)} of {total} worker(s) finished")
    for w in done:
        # What it posted, so a person sees the interrupted run's writes are on GitHub.
        links = "".join(f" {url}" for url in posted.get(w.id, []))
        rest = f"; {LEFT_AFTER_WRITE}" if w.id in unfinished else ""
        say(f"  done: {task_label(w.task)} ({' > '.join(w.role_chain)}): {w.status}{links}{rest}")
    labels = sorted({task_label(w.task) for w in left})
    never = total - len(workers)
    if labels or never > 0:
        started = f"{', '.join(labels)}" if labels else ""
        later = f"{never} worker(s) never started" if never > 0 else ""
        say("  left for the next run: " + "; ".join(p for p in (started, later) if p))


def flow_run_link(state: State[Any]) -> str | None:
    """The page of the flow run that ended in ``state``, in the UI of the API it reported to."""
    from prefect.settings import get_current_settings

    base = get_current_settings().ui_url
    flow_run_id = state.state_details.flow_run_id
    if not base or flow_run_id is None:
        return None
    return f"{base.rstrip('/')}/runs/flow-run/{flow_run_id}"


def run_once(flags: RunRequest) -> int:
    """``swarm run``: one flow run of what the flags ask; exit 1 when a worker was blocked or
    failed. ``--pr`` values are checked and spelled out (a bare ``N`` takes the one ``--repo``)
    and the configured repositories filled in before the flow is asked."""
    from flows.cli.console import print_report
    from flows.cli.preflight import preflight, target_flags

    wanted = target_flags(flags.targets, flags.repos, flags.force)
    settings = preflight(
        repos=flags.repos,
        role=flags.role,
        model=flags.model,
        overlay=flags.overlay,
        targets=wanted,
    )
    prepare_prefect_env()
    use_local_prefect(settings.data_dir)
    checked = {"repos": tuple(settings.repos), "targets": tuple(wanted) or None}
    report = execute_flow(flags.model_copy(update=checked))
    if report.outcomes or not report.not_open:
        print_report(report)
    for target in report.not_open:
        # A --pr that names no open pull request is a flag to fix, like any other.
        repo, _, number = target.rpartition("#")
        kind = _kind(settings, flags.role)
        asked = f"--retry {flags.retry_of}: {target}" if flags.retry_of else f"--pr {target}"
        typer.echo(f"error: {asked}: {repo} has no open {kind} #{number}", err=True)
    if report.not_open:
        return EXIT_USAGE
    return EXIT_OK if report.ok else EXIT_FAILED


def _kind(settings: Settings, role: str) -> str:
    """What ``--pr`` names for ``role``: a pull request, or an issue for a triaging role."""
    from flows.cli.preflight import reviewing_role

    return "pull request" if "submit_review" in reviewing_role(settings, role).tools else "issue"
