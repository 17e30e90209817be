"""Running the ``swarm-run`` flow once from the command line and printing what it did."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, cast

from agents.errors import EXIT_FAILED, EXIT_OK
from flows.local.env import prepare_prefect_env
from flows.local.prefect_server import use_local_prefect
from flows.run.report import RunReport

if TYPE_CHECKING:
    from prefect.client.schemas.objects import State

    from agents.planning.costs import RunEstimate


def execute_flow(**parameters: object) -> RunReport:
    """Run the flow in this process against the configured or local Prefect server, with a
    progress bar over its workers."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from flows.cli.console import console
    from flows.cli.errors import debug_enabled
    from flows.local.env import hide_console_tracebacks
    from flows.run.fanout import watching_progress
    from flows.run.flow import swarm_run
    from flows.run.spend import watching_estimate

    if not debug_enabled():
        hide_console_tracebacks()

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
            progress.console.print(estimate.line(), markup=False, highlight=False)

        with watching_progress(advance), watching_estimate(told):
            pending = swarm_run(**parameters, return_state=True)
            state = asyncio.run(cast("Coroutine[Any, Any, State[Any]]", pending))
    result = state.result(raise_on_failure=False)
    if isinstance(result, RunReport):
        return result.model_copy(update={"ui_link": flow_run_link(state)})
    if isinstance(result, BaseException):
        raise result
    raise RuntimeError(f"swarm-run ended {state.name} without a report: {state.message}")


def flow_run_link(state: State[Any]) -> str | None:
    """The page of the flow run that ended in ``state``, in the UI of the API it reported to."""
    from prefect.settings import get_current_settings

    base = get_current_settings().ui_url
    flow_run_id = state.state_details.flow_run_id
    if not base or flow_run_id is None:
        return None
    return f"{base.rstrip('/')}/runs/flow-run/{flow_run_id}"


def run_once(
    *,
    repos: list[str] | None,
    role: str,
    max_workers: int | None,
    dry_run: bool,
    model: str | None,
    max_cost: float | None = None,
    overlay: str | None = None,
    targets: list[str] | None = None,
    force: bool = False,
) -> int:
    """``swarm run``: one flow run now; exit 1 when a worker was blocked or failed."""
    from flows.cli.console import print_report
    from flows.cli.preflight import preflight, target_flags

    wanted = target_flags(targets, repos, force)
    settings = preflight(repos=repos, role=role, model=model, overlay=overlay, targets=wanted)
    prepare_prefect_env()
    use_local_prefect(settings.data_dir)
    # The flow's parameters are the flags of the same names; targets travel only when given.
    flags: dict[str, object] = {"role": role, "max_workers": max_workers, "model": model}
    flags |= {"dry_run": dry_run, "max_cost": max_cost, "overlay": overlay}
    if wanted:
        flags |= {"targets": wanted, "force": force}
    report = execute_flow(repos=list(settings.repos), **flags)
    print_report(report)
    return EXIT_OK if report.ok else EXIT_FAILED
