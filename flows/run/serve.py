"""``swarm serve``: the swarm as a Prefect deployment with a cron schedule, served from here.

For more than one machine use ``prefect.yaml`` (a process work pool and ``prefect worker``
processes); see docs/quickstart.md. Parameters hold nothing secret: every run loads its settings
and keys from its own environment when it starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from flows.local.env import prepare_prefect_env
from flows.local.prefect_server import use_local_prefect

if TYPE_CHECKING:
    from prefect.deployments.runner import RunnerDeployment


def deployment_parameters(
    *,
    repos: list[str] | None,
    role: str,
    max_workers: int | None,
    model: str | None,
    overlay: str | None = None,
) -> dict[str, Any]:
    params: dict[str, Any] = {"role": role}
    if overlay:
        params["overlay"] = overlay
    if repos:
        params["repos"] = list(repos)
    if max_workers:
        params["max_workers"] = max_workers
    if model:
        params["model"] = model
    return params


def serve_schedule(
    *,
    cron: str,
    repos: list[str] | None,
    role: str,
    max_workers: int | None,
    model: str | None,
    name: str,
    overlay: str | None = None,
) -> None:
    from agents.settings.model import load_settings
    from flows.cli.preflight import needs, repo_flags, serving_checks

    # Before a Prefect server is started for nothing.
    settings = load_settings(
        needs=needs(any_identity=True, repos=True),
        checks=serving_checks(overlay, model),
        **repo_flags(repos),
    )
    prepare_prefect_env()
    # The schedule lives in the Prefect server: the local one unless PREFECT_API_URL says.
    use_local_prefect(settings.data_dir)
    _check_cron(cron)
    from prefect import serve

    from flows.run.flow import swarm_run

    deployment = swarm_run.to_deployment(  # a coroutine only when called from async code
        name=name,
        cron=cron,
        parameters=deployment_parameters(
            repos=list(settings.repos),
            role=role,
            max_workers=max_workers,
            model=model,
            overlay=overlay,
        ),
        tags=["swarm", f"role:{role}"],
        description="Review every open PR that changed since the swarm last looked.",
    )
    serve(cast("RunnerDeployment", deployment))


def _check_cron(cron: str) -> None:
    from pydantic import ValidationError

    from agents.settings.model import ConfigError

    try:
        from prefect.client.schemas.schedules import CronSchedule

        CronSchedule(cron=cron)
    except (ValidationError, ValueError):
        raise ConfigError(
            f"--cron: {cron!r} is not a cron expression (e.g. '*/30 * * * *')"
        ) from None
