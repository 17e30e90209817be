"""Running the ``swarm-run`` flow once from the command line and printing what it did."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, cast

from flows.prefect_env import prepare_prefect_env
from flows.report import RunReport

if TYPE_CHECKING:
    from prefect.client.schemas.objects import State

    from agents.config import Settings

EXIT_OK = 0
EXIT_WORKERS_FAILED = 1


def execute_flow(**parameters: Any) -> RunReport:
    """Run the flow in this process (Prefect starts a temporary server if none is configured),
    with a progress bar over its workers."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from flows.console import console
    from flows.fanout import PROGRESS_LISTENERS
    from flows.swarm_run import swarm_run

    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=console,
        transient=True,
    ) as progress:
        bar = progress.add_task("starting Prefect, discovering work", total=None)

        def advance(done: int, total: int) -> None:
            progress.update(bar, description="workers", completed=done, total=total)

        PROGRESS_LISTENERS.append(advance)
        try:
            pending = swarm_run(**parameters, return_state=True)
            state = asyncio.run(cast("Coroutine[Any, Any, State[Any]]", pending))
        finally:
            PROGRESS_LISTENERS.remove(advance)
    result = state.result(raise_on_failure=False)
    if isinstance(result, RunReport):
        return result
    if isinstance(result, BaseException):
        raise result
    raise RuntimeError(f"swarm-run ended {state.name} without a report: {state.message}")


def preflight(*, repos: list[str] | None, role: str) -> Settings:
    """Check settings, the role and its identity before Prefect spends seconds starting, so a
    mistake is one line naming the setting instead of a failed flow run."""
    from agents.config import ConfigError, load_settings
    from agents.roles import load_roles

    settings = load_settings(**({"repos": repos} if repos else {}))
    if not settings.repos:
        raise ConfigError("no repositories to work on: pass --repo OWNER/NAME or set SWARM_REPOS")
    settings.require_maintainer_login()
    roles = load_roles(settings.roles_dir)
    if role not in roles:
        known = ", ".join(sorted(roles))
        raise ConfigError(f"--role: no role {role!r} in {settings.roles_dir} (known: {known})")
    if "submit_review" not in roles[role].tools:
        raise ConfigError(
            f"--role: role {role!r} does not review pull requests (it has no submit_review "
            "tool); swarm run dispatches one review per open PR"
        )
    settings.identity(roles[role].identity)
    return settings


def run_once(
    *,
    repos: list[str] | None,
    role: str,
    max_workers: int | None,
    dry_run: bool,
    model: str | None,
) -> int:
    """``swarm run``: one flow run now; exit 1 when a worker was blocked or failed."""
    from flows.console import print_report

    settings = preflight(repos=repos, role=role)
    prepare_prefect_env()
    report = execute_flow(
        repos=list(settings.repos),
        role=role,
        max_workers=max_workers,
        dry_run=dry_run,
        model=model,
    )
    print_report(report)
    return EXIT_OK if report.ok else EXIT_WORKERS_FAILED
