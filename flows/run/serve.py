"""``swarm serve``: the swarm as a Prefect deployment with a cron schedule, served from here.

For more than one machine use ``prefect.yaml`` (a process work pool and ``prefect worker``
processes); see docs/quickstart.md. Parameters hold nothing secret: every run loads its settings
and keys from its own environment when it starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from flows.local.env import prepare_prefect_env
from flows.local.prefect_server import use_local_prefect
from flows.run.request import RunRequest

if TYPE_CHECKING:
    from prefect.deployments.runner import RunnerDeployment


def serve_schedule(request: RunRequest, *, cron: str, name: str) -> None:
    """Serve ``request`` (its repositories: the configured ones when it names none) every
    ``cron`` tick as the deployment ``name``."""
    from agents.settings.model import load_settings
    from flows.cli.preflight import needs, repo_flags, serving_checks

    # Before a Prefect server is started for nothing.
    settings = load_settings(
        needs=needs(any_identity=True, repos=True),
        checks=serving_checks(request.overlay, request.model),
        **repo_flags(request.repos),
    )
    prepare_prefect_env()
    # The schedule lives in the Prefect server: the local one unless PREFECT_API_URL says.
    use_local_prefect(settings.data_dir)
    _check_cron(cron)
    from prefect import serve

    asked = request.model_copy(update={"repos": tuple(settings.repos)})
    serve(scheduled_deployment(asked, cron=cron, name=name))


def scheduled_deployment(request: RunRequest, *, cron: str, name: str) -> RunnerDeployment:
    """The ``swarm-run`` deployment that runs ``request`` on ``cron``; its parameters are the
    request's fields that differ from the defaults."""
    from flows.run.flow import swarm_run

    deployment = swarm_run.to_deployment(  # a coroutine only when called from async code
        name=name,
        cron=cron,
        parameters=request.parameters(),
        tags=["swarm", f"role:{request.role}"],
        description="Review every open PR that changed since the swarm last looked.",
    )
    return cast("RunnerDeployment", deployment)


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
