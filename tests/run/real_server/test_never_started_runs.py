"""The shipped dead-run automations (automations/dead-flow-runs.yaml), created with the documented
command on a real Prefect server: a run a worker picked up (Pending) whose machine died before
its process started ends Crashed; a run that started is left alone."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.paths import ROOT
from tests.prefect_server import PrefectServer, client_env
from tests.python_process import run_python

pytestmark = [pytest.mark.prefect, pytest.mark.slow]

AUTOMATIONS = ROOT / "automations" / "dead-flow-runs.yaml"
NEVER_STARTED = "swarm flow runs that never started"
# The shipped 300 s, shortened to Prefect's shortest proactive window so the test waits seconds;
# every other part of the file is as shipped.
WITHIN_S = 10
CRASH_TIMEOUT_S = 120.0
# The triggers service evaluates proactive triggers every 5 s (Prefect's default granularity).
EVALUATION_S = 5


@pytest.fixture
def automations(real_prefect: PrefectServer, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """Both automations of the shipped file, created by the documented one command; the
    never-started one's window shortened. Deleted afterwards: the server is the session's."""
    shipped = yaml.safe_load(AUTOMATIONS.read_text(encoding="utf-8"))
    [never_started] = [a for a in shipped["automations"] if a["name"] == NEVER_STARTED]
    never_started["trigger"]["within"] = WITHIN_S
    ours = tmp_path / "dead-flow-runs.yaml"
    ours.write_text(yaml.safe_dump(shipped), encoding="utf-8")
    env = client_env(real_prefect.api_url, tmp_path / "client-home")
    args = ("-m", "prefect", "automation", "create", "--from-file", str(ours))
    names = {a["name"] for a in shipped["automations"]}
    try:
        created = run_python(*args, env=env, timeout=120)
        assert created.returncode == 0, created.stdout + created.stderr
        assert "Created 2 automation(s)" in created.stdout
        # The server loads a new automation into its triggers service just after the commit.
        time.sleep(1)
        yield never_started
    finally:
        for made in real_prefect.api("POST", "/automations/filter", {}):
            if made["name"] in names:
                real_prefect.api("DELETE", f"/automations/{made['id']}")


def _new_run(server: PrefectServer, name: str) -> str:
    flow = server.api("POST", "/flows/", {"name": "swarm-run"})
    body = {"flow_id": flow["id"], "name": name, "state": {"type": "SCHEDULED"}}
    return str(server.api("POST", "/flow_runs/", body)["id"])


def _set(server: PrefectServer, run_id: str, type_: str, name: str) -> None:
    """A state proposed as Prefect's worker and flow engine propose it (no force)."""
    body = {"state": {"type": type_, "name": name}}
    result = server.api("POST", f"/flow_runs/{run_id}/set_state", body)
    assert result["status"] == "ACCEPT", result


def _states(server: PrefectServer, run_id: str) -> list[dict[str, Any]]:
    return list(server.api("GET", f"/flow_run_states/?flow_run_id={run_id}"))


# A real server's triggers and actions services on a loaded machine.
@pytest.mark.timeout(300)
def test_a_run_whose_worker_died_before_it_started_ends_crashed_and_a_started_run_is_untouched(
    real_prefect: PrefectServer, automations: dict[str, Any]
) -> None:
    dead = _new_run(real_prefect, "picked up, machine died")
    alive = _new_run(real_prefect, "picked up, started")
    # What `prefect worker` does when it picks a run up; then the machine dies: no process,
    # no Running, no heartbeat ever.
    for run_id in (dead, alive):
        _set(real_prefect, run_id, "PENDING", "Pending")
        _set(real_prefect, run_id, "PENDING", "Submitting")
    started = time.monotonic()
    # The other run's flow-run process starts, as it does in 8-9 s on this machine.
    _set(real_prefect, alive, "RUNNING", "Running")

    deadline = started + CRASH_TIMEOUT_S
    state = real_prefect.api("GET", f"/flow_runs/{dead}")["state"]
    while state["type"] != "CRASHED" and time.monotonic() < deadline:
        time.sleep(0.5)
        state = real_prefect.api("GET", f"/flow_runs/{dead}")["state"]
    crashed_after_s = time.monotonic() - started
    assert state["type"] == "CRASHED", state
    assert state["message"] == automations["actions"][0]["message"]
    assert crashed_after_s >= WITHIN_S

    # Both windows opened together, so the started run's one has been evaluated by now (two
    # more evaluations to be sure): Running met its expectation and nothing touched it.
    time.sleep(2 * EVALUATION_S)
    assert real_prefect.api("GET", f"/flow_runs/{alive}")["state"]["type"] == "RUNNING"
    _set(real_prefect, alive, "COMPLETED", "Completed")
    names = [s["name"] for s in _states(real_prefect, alive)]
    assert "Crashed" not in names and names[-1] == "Completed", names
    print(f"never-started run marked Crashed {crashed_after_s:.1f} s after Pending")
