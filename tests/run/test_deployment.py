"""The scheduled deployment (``swarm serve``) and ``prefect.yaml`` for a process work pool."""

from __future__ import annotations

from typing import Any

import yaml

from flows.run.request import RunRequest
from flows.run.serve import scheduled_deployment
from tests.paths import ROOT


def _prefect_yaml() -> dict[str, Any]:
    loaded = yaml.safe_load((ROOT / "prefect.yaml").read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def test_serve_builds_a_cron_deployment_with_plain_parameters() -> None:
    from prefect.client.schemas.schedules import CronSchedule
    from prefect.deployments.runner import RunnerDeployment

    request = RunRequest(repos=["acme/widgets"], role="triager", max_workers=4, model="scripted")
    deployment = scheduled_deployment(request, name="swarm-scheduled", cron="*/30 * * * *")
    assert isinstance(deployment, RunnerDeployment)  # called outside a loop: not a coroutine
    # Plain JSON, only what differs from the defaults, and it reads back as the same request.
    assert deployment.parameters == {
        "request": {
            "repos": ["acme/widgets"],
            "role": "triager",
            "max_workers": 4,
            "model": "scripted",
        }
    }
    assert RunRequest.of_parameters(deployment.parameters) == request
    assert deployment.tags == ["swarm", "role:triager"]
    [schedule] = deployment.schedules or []
    assert isinstance(schedule.schedule, CronSchedule)
    assert schedule.schedule.cron == "*/30 * * * *"


def test_every_deployment_in_prefect_yaml_loads_the_flow_from_any_directory() -> None:
    from prefect.flows import load_flow_from_entrypoint

    from flows.run.flow import swarm_run

    config = _prefect_yaml()
    assert config["deployments"]
    # No pull step: a hard-coded directory broke every run on machines with another layout.
    assert config["pull"] == []
    for deployment in config["deployments"]:
        # A module path, imported from the worker's environment, not a file under a directory.
        assert load_flow_from_entrypoint(deployment["entrypoint"]) is swarm_run
        swarm_run.validate_parameters(deployment.get("parameters") or {})
        assert deployment["schedules"][0]["cron"]


def test_prefect_yaml_never_overrides_a_worker_machines_settings() -> None:
    config = _prefect_yaml()
    for deployment in config["deployments"]:
        job = deployment["work_pool"].get("job_variables") or {}
        # Prefect merges the job's env over the worker's: SWARM_MODEL here beat the machine's.
        assert not job.get("env"), job
        # The worker's own interpreter runs the flow; a command here ran it in a temp folder.
        assert "command" not in job
        # CANCEL_NEW cancelled the run a person triggered while a scheduled one was going.
        assert "concurrency_limit" not in deployment


def test_prefect_yaml_holds_no_secret_and_no_deploy_time_secret_template() -> None:
    text = (ROOT / "prefect.yaml").read_text(encoding="utf-8")
    config = _prefect_yaml()
    env_keys = {
        key
        for deployment in config["deployments"]
        for key in (deployment["work_pool"].get("job_variables") or {}).get("env") or {}
    }
    secret_settings = {
        "SWARM_APP_PRIVATE_KEY",
        "SWARM_SEALING_KEY",
        "ANTHROPIC_API_KEY",
        "SWARM_STORE_URL",
        "GH_TOKEN",
        "GITHUB_TOKEN",
    }
    assert env_keys.isdisjoint(secret_settings)
    # Templated values are resolved at deploy time and stored in plain text in the deployment.
    assert "{{" not in "\n".join(
        line for line in text.splitlines() if not line.lstrip().startswith("#")
    )


def _dead_run_automations() -> dict[str, Any]:
    """The shipped file's automations by name, as ``prefect automation create`` validates them."""
    from prefect.events.schemas.automations import AutomationCore

    text = (ROOT / "automations" / "dead-flow-runs.yaml").read_text(encoding="utf-8")
    loaded = yaml.safe_load(text)["automations"]
    return {a["name"]: AutomationCore.model_validate(a) for a in loaded}


ENDINGS = {"Completed", "Skipped", "Failed", "TimedOut", "Cancelled", "Crashed"}


def test_the_dead_run_automation_never_crashes_a_run_that_ended() -> None:
    """Every way a swarm run ends is an expected event, swarm's own ``Skipped`` included: a run
    that ended and so stopped sending heartbeats must not be marked Crashed 90 s later."""
    from prefect.events.schemas.automations import EventTrigger, Posture

    automation = _dead_run_automations()["swarm dead flow runs"]
    trigger = automation.trigger
    assert isinstance(trigger, EventTrigger) and trigger.posture == Posture.Proactive
    assert trigger.after == {"prefect.flow-run.heartbeat"}
    assert {f"prefect.flow-run.{name}" for name in ENDINGS} <= trigger.expect
    # Three heartbeats (Prefect's shortest interval is 30 s) go missing before it fires.
    assert trigger.within.total_seconds() >= 90
    [action] = automation.actions
    assert action.model_dump()["state"] == "CRASHED"


def test_the_never_started_automation_is_satisfied_by_every_start_and_every_ending() -> None:
    """A run that reached Running under any of the names Prefect gives it (a retry is
    ``Retrying``, a second run ``Rerunning``), or ended, is never marked Crashed by it; it waits
    far longer than a flow-run process takes to start (8-9 s here)."""
    from prefect.events.schemas.automations import EventTrigger, Posture

    automation = _dead_run_automations()["swarm flow runs that never started"]
    trigger = automation.trigger
    assert isinstance(trigger, EventTrigger) and trigger.posture == Posture.Proactive
    assert trigger.after == {"prefect.flow-run.Pending"}
    starts = {"Running", "Retrying", "Rerunning"}
    assert {f"prefect.flow-run.{name}" for name in starts | ENDINGS} <= trigger.expect
    assert trigger.within.total_seconds() >= 120
    [action] = automation.actions
    assert action.model_dump()["state"] == "CRASHED"
