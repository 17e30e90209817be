"""What ``swarm run`` prints on the terminal: the swarm's own story (which PRs, how each worker
ended, the table, the link to the run), not Prefect's INFO lines, which still reach the
server's run logs and show on the terminal with ``--verbose``."""

from __future__ import annotations

import re

import pytest
from rich.cells import cell_len

from agents.store import Store
from sandbox.github.seed import DOCS
from tests.pty_terminal import run_in_terminal
from tests.run.real_server.conftest import SWARM, ObservedSwarm

pytestmark = [pytest.mark.prefect, pytest.mark.slow]
PREFECT_LINES = ("| INFO    | prefect", "Beginning flow run", "Finished in state Completed")


def test_a_run_tells_the_swarms_story_and_not_prefects(swarm: ObservedSwarm) -> None:
    run = swarm.run("--repo", DOCS)
    assert run.returncode == 0, run.output
    assert not [line for line in PREFECT_LINES if line in run.output], run.output
    assert f"review {DOCS}#1@" in run.output and ": succeeded; review posted: http" in run.output
    assert "Prefect UI: http://127.0.0.1:" in run.output
    assert "UserWarning" not in run.output and "Traceback" not in run.output
    # The server's run logs hold Prefect's lines all the same.
    messages = [entry["message"] for entry in swarm.logs(run.flow_run_id)]
    assert any("Beginning flow run" in m for m in messages)


def test_verbose_shows_prefects_lines_too(swarm: ObservedSwarm) -> None:
    run = swarm.run("--repo", DOCS, "--verbose")
    assert run.returncode == 0, run.output
    assert "Beginning flow run" in run.output, run.output


@pytest.mark.parametrize("columns", [80, 120])
def test_the_worker_table_fits_a_real_terminal_with_ids_and_costs_whole(
    swarm: ObservedSwarm, columns: int
) -> None:
    code, output = run_in_terminal(
        [SWARM, "run", "--repo", DOCS, "--dry-run"],
        columns=columns,
        env=swarm.env(),
        cwd=swarm.root,
    )
    assert code == 0, output
    table = [line for line in output.splitlines() if line[:1] in set("┏┃┡│└")]
    assert table, output
    assert max(cell_len(line) for line in table) <= columns, output
    assert all(line.rstrip()[-1] in "┓┃┩│┘" for line in table), output  # not cropped
    headers = [c.strip() for line in table if line[0] == "┃" for c in line.strip("┃").split("┃")]
    assert "" not in headers and {"worker", "PR", "outcome", "cost"} <= set(headers), output
    with Store.open(None, swarm.root / "data") as store:
        [run] = store.list_runs(limit=1)
        workers = [w.id for w in store.list_workers(run_id=run.id)]
    assert workers and all(w in output for w in workers), output
    costs = [c for line in table for c in re.findall(r"\$[0-9.]+", line)]
    assert len(costs) == len(workers) and all(re.fullmatch(r"\$\d+\.\d{4}", c) for c in costs)


def test_a_failed_worker_ends_in_the_swarms_line_not_prefects_repr(swarm: ObservedSwarm) -> None:
    run = swarm.run("--repo", DOCS, SWARM_APP_BOT_LOGIN="impostor[bot]")
    assert run.returncode != 0, run.output
    assert f"review {DOCS}#1@" in run.output and ": blocked" in run.output, run.output
    assert "WorkerOutcome(" not in run.output, run.output
    assert "Task run failed with state" not in run.output, run.output
    # The server's run logs keep Prefect's line.
    messages = [entry["message"] for entry in swarm.logs(run.flow_run_id)]
    assert any("Task run failed with state" in m for m in messages)
