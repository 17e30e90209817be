"""Running the ``swarm-run`` flow once from the command line and printing what it did."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, cast

from flows.prefect_env import prepare_prefect_env
from flows.report import RunReport

if TYPE_CHECKING:
    from prefect.client.schemas.objects import State

EXIT_OK = 0
EXIT_WORKERS_FAILED = 1


def execute_flow(**parameters: Any) -> RunReport:
    """Run the flow in this process (Prefect starts a temporary server if none is configured)."""
    from flows.swarm_run import swarm_run

    pending = swarm_run(**parameters, return_state=True)
    state = asyncio.run(cast("Coroutine[Any, Any, State[Any]]", pending))
    result = state.result(raise_on_failure=False)
    if isinstance(result, RunReport):
        return result
    if isinstance(result, BaseException):
        raise result
    raise RuntimeError(f"swarm-run ended {state.name} without a report: {state.message}")


def run_once(
    *,
    repos: list[str] | None,
    role: str,
    max_workers: int | None,
    dry_run: bool,
    model: str | None,
) -> int:
    """``swarm run``: one flow run now; exit 1 when a worker was blocked or failed."""
    from agents.config import load_settings
    from flows.console import console, print_report

    # Validate settings before Prefect spends seconds starting: errors name the setting.
    overrides: dict[str, Any] = {"repos": repos} if repos else {}
    settings = load_settings(**overrides)
    if not settings.repos:
        from agents.config import ConfigError

        raise ConfigError("no repositories to work on: pass --repo OWNER/NAME or set SWARM_REPOS")
    prepare_prefect_env()
    with console.status("running the swarm (starting Prefect if needed)..."):
        report = execute_flow(
            repos=list(settings.repos),
            role=role,
            max_workers=max_workers,
            dry_run=dry_run,
            model=model,
        )
    print_report(report)
    return EXIT_OK if report.ok else EXIT_WORKERS_FAILED
