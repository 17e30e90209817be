"""What a person watching a swarm on a real Prefect server reads in the run's logs."""

from __future__ import annotations

import pytest

from tests.run.real_server.conftest import ObservedSwarm

pytestmark = [pytest.mark.prefect, pytest.mark.slow]


def test_the_flow_runs_log_holds_the_projects_own_lines(observed: ObservedSwarm) -> None:
    run = observed.runs[0]
    logs = observed.logs(run.flow_run_id)
    flow_lines = [log for log in logs if log["task_run_id"] is None]
    ours = [log["message"] for log in flow_lines if not log["name"].startswith("prefect")]
    assert any("PR(s) to review" in line for line in ours), ours


def test_every_worker_task_run_log_holds_that_workers_own_lines(observed: ObservedSwarm) -> None:
    run = observed.runs[0]
    task_runs = observed.task_runs(run.flow_run_id)
    assert task_runs
    logs = observed.logs(run.flow_run_id)
    for task_run in task_runs:
        own = [
            log
            for log in logs
            if log["task_run_id"] == task_run["id"] and log["name"].startswith("agents")
        ]
        assert own, f"no project log line in task run {task_run['name']}"
        assert all(log["level"] >= 20 for log in own)


def test_a_workers_task_run_log_tells_its_story_in_order(observed: ObservedSwarm) -> None:
    run = observed.runs[0]
    worker = next(t for t in observed.task_runs(run.flow_run_id) if "acme/widgets#1" in t["name"])
    lines = [
        log["message"]
        for log in observed.logs(run.flow_run_id)
        if log["task_run_id"] == worker["id"] and log["name"] == "agents.worker"
    ]
    steps = [
        "starts: acme/widgets#1",
        "identity verified: swarm-reviewer[bot]",
        "LLM call 1 (",
        "read the changed files: page 1/1",
        "checkpoint: ",
        "submit_review: review posted: ",
        "ended succeeded: ",
    ]
    found = [next((i for i, line in enumerate(lines) if step in line), -1) for step in steps]
    assert -1 not in found and found == sorted(found), "\n".join(lines)
