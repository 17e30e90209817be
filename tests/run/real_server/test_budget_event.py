"""A worker that spends its budget is an event a team can be told about, on a real server."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from sandbox.github.seed import WIDGETS, WIDGETS_PR_PDB
from tests.paths import ROOT
from tests.run.real_server.conftest import ObservedSwarm

pytestmark = [pytest.mark.prefect, pytest.mark.slow]

EVENT_WAIT_S = 60


@pytest.mark.timeout(600)
def test_a_spent_budget_is_an_event_about_the_pr_and_a_failed_task_run(
    observed: ObservedSwarm, tmp_path: Path
) -> None:
    roles = tmp_path / "roles"
    shutil.copytree(ROOT / "roles", roles)
    reviewer = roles / "reviewer.yaml"
    reviewer.write_text(reviewer.read_text().replace("max_turns: 20", "max_turns: 2"))
    # A new commit makes the PR need a review; two turns are not enough to write one.
    observed.sandbox.state.push_commit(WIDGETS, WIDGETS_PR_PDB, {"NOTES.md": "budget\n"})
    run = observed.run("--repo", WIDGETS, SWARM_ROLES_DIR=str(roles))
    # A spent turn budget is met again at the same head: the PR gets a note saying so, and a
    # PR dealt with that way does not fail the run (the event still tells the team).
    assert run.returncode == 0, run.output
    assert "noted as not reviewed in full" in run.output

    # Other tests of the session may leave more PRs needing a review: find this one's worker.
    (task_run,) = [
        t
        for t in observed.task_runs(run.flow_run_id)
        if t["name"].startswith(f"review {WIDGETS}#{WIDGETS_PR_PDB}@")
    ]
    assert task_run["state"]["name"] == "BudgetExhausted"
    about_it = f"prefect.task-run.{task_run['id']}"
    # The server stores events in batches a few seconds after they arrive: wait for it.
    deadline = time.monotonic() + EVENT_WAIT_S
    while True:
        spent = [
            e
            for e in observed.events("swarm.worker.budget-exhausted")
            if any(r["prefect.resource.id"] == about_it for r in e["related"])
        ]
        if spent or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert len(spent) == 1
    roles_of = {r["prefect.resource.role"]: r["prefect.resource.id"] for r in spent[0]["related"]}
    assert roles_of["pull-request"] == f"swarm.pull-request.{WIDGETS}#{WIDGETS_PR_PDB}"
    assert "turn budget" in spent[0]["payload"]["reason"]
    lines = [log["message"] for log in observed.logs(run.flow_run_id)]
    assert any(line.startswith("ended budget_exhausted (") for line in lines), lines
