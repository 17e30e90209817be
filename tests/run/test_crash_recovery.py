"""A worker whose process was killed is marked failed when the next run starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from agents.store import NewWorker
from agents.store.store import Store
from flows.run.adapters import start_store_run


def test_next_run_marks_a_killed_workers_record_failed_and_keeps_its_transcript(
    tmp_path: Path,
) -> None:
    store = Store.open(None, tmp_path)
    try:
        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        run_id = store.create_run("earlier")
        worker = store.create_worker(
            NewWorker(run_id, role_chain=["reviewer"], status="running", pid=dead.pid)
        )
        store.append_event(worker, "user_turn", "review acme/widgets#1")
        store.append_event(worker, "assistant_turn", {"content": [{"type": "text", "text": "…"}]})

        runtime: Any = SimpleNamespace(store=store)
        start_store_run(runtime, trigger="next", flow_run_id=None, asked={"role": "reviewer"})

        record = store.get_worker(worker)
        assert record.status == "failed"
        assert record.blocked_reason is not None and str(dead.pid) in record.blocked_reason
        kinds = [e.kind for e in store.get_transcript(worker)]
        assert kinds[:2] == ["user_turn", "assistant_turn"]
    finally:
        store.close()
