"""``swarm serve``: the swarm as a Prefect deployment with a cron schedule, served from here.

For more than one machine use ``prefect.yaml`` (a process work pool and ``prefect worker``
processes); see docs/quickstart.md. Parameters hold nothing secret: every run loads its settings
and keys from its own environment when it starts.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from flows.local.env import prepare_prefect_env
from flows.local.prefect_server import auth_file, password_hint, prefect_home, use_local_prefect
from flows.run.request import RunRequest

if TYPE_CHECKING:
    from prefect.deployments.runner import RunnerDeployment


def serve_schedule(request: RunRequest, *, cron: str, name: str) -> None:
    """Serve ``request`` (its repositories: the configured ones when it names none) every
    ``cron`` tick as the deployment ``name``."""
    from agents.settings.model import load_settings
    from flows.cli.preflight import check_store, needs, repo_flags, serving_checks

    # Before a Prefect server is started for nothing.
    settings = load_settings(
        needs=needs(any_identity=True, repos=True),
        checks=serving_checks(request.overlay, request.model),
        **repo_flags(request.repos),
    )
    # A store every scheduled run would fail to open is refused now, in one line, as `run` does.
    check_store(settings)
    prepare_prefect_env()
    from flows.local.env import configured_api_url

    local = configured_api_url() is None
    # The schedule lives in the Prefect server: the local one unless PREFECT_API_URL says.
    api_url = use_local_prefect(settings.data_dir)
    _check_cron(cron)
    from prefect import serve

    asked = request.model_copy(update={"repos": tuple(settings.repos)})
    deployment = scheduled_deployment(asked, cron=cron, name=name)
    home = prefect_home(settings.data_dir) if local else None
    # Registered before the hint below is printed: `serve` registers it only after, so a person
    # (or a script) quick to type the hint was told "Deployment ... not found!". `serve` applies
    # it again, an upsert by name.
    deployment.apply()
    for line in serving_lines(f"swarm-run/{name}", cron, settings.repos, api_url, home):
        print(line, flush=True)
    # Prefect's own message names `prefect deployment run ...`, which in the person's shell
    # (no PREFECT_API_URL, no `uv run`) said "command not found", or started a server of its own
    # and said the deployment does not exist.
    serve(deployment, print_starting_message=False)


def serving_lines(
    deployment: str, cron: str, repos: Sequence[str], api_url: str, home: Path | None
) -> list[str]:
    """What ``swarm serve`` says while it serves: the schedule, and commands that work as
    typed in another shell of the same checkout (the local server's API and where its auth
    string is named when the server is ours, of ``home``)."""
    env = ""
    if home is not None:
        auth = shlex.quote(str(auth_file(home)))
        env = f'PREFECT_API_URL={api_url} PREFECT_API_AUTH_STRING="$(cat {auth})" '
    lines = [
        f"deployment '{deployment}' is being served: {cron} (UTC) over {', '.join(repos)}; "
        "Ctrl-C stops it",
        f"run it now, from another shell: {env}uv run prefect deployment run '{deployment}'",
    ]
    if home is not None:
        lines.append(f"its runs in the Prefect UI: {api_url.removesuffix('/api')}/deployments")
        lines.append(password_hint(home))
    return lines


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
