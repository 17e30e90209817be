"""``swarm runs`` shows each worker's end in the outcome's own words."""

from __future__ import annotations

import os
from pathlib import Path

from agents.outcome import OUTCOME_STATUSES
from agents.store import Store
from tests.cli.conftest import swarm


def test_runs_shows_paused_and_skipped_workers_as_themselves() -> None:
    with Store.open(None, Path(os.environ["SWARM_DATA_DIR"])) as store:
        run_id = store.create_run("manual")
        for status in OUTCOME_STATUSES:
            worker = store.create_worker(
                run_id, worker_id=f"w-{status}", role_chain=["reviewer"], status="running"
            )
            store.finish_worker(worker, status, blocked_reason=f"why {status}")
        store.finish_run(run_id, "partial", {"workers": len(OUTCOME_STATUSES)})
    seen = swarm("runs", run_id)
    assert seen.code == 0, seen.output
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in seen.lines if "│" in line]
    shown = {row[0]: (row[4], row[5]) for row in cells if row[0].startswith("w-")}
    assert shown == {f"w-{status}": (status, f"why {status}") for status in OUTCOME_STATUSES}
