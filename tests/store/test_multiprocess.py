"""Several processes at once: concurrent appends, a killed worker, simultaneous first opens."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
from collections.abc import Sequence
from datetime import timedelta

import pytest

from agents.store import NewWorker, Store
from tests.store.backends import StoreTarget
from tests.store.procs import append_from_threads, batch_sizes, open_fresh, work_until_killed

PROCESSES = 8
THREADS = 8
# fork: spawning re-imports the stack in every child, which costs seconds per process.
ctx = mp.get_context("fork")


def _run_all(procs: Sequence[mp.process.BaseProcess], timeout: float = 120) -> None:
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout)
    assert [p.exitcode for p in procs] == [0] * len(procs)


@pytest.mark.slow
def test_8_processes_x_8_threads_append_without_loss_duplication_or_reordering(
    store: Store, store_target: StoreTarget
) -> None:
    run_id = store.create_run("concurrency")
    workers = [
        store.create_worker(NewWorker(run_id, role_chain=["reviewer"], status="running"))
        for _ in range(PROCESSES * THREADS)
    ]
    procs = [
        ctx.Process(
            target=append_from_threads,
            args=(store_target, workers[p * THREADS : (p + 1) * THREADS], p * THREADS),
        )
        for p in range(PROCESSES)
    ]
    store.close()  # no pooled connection may cross the fork
    _run_all(procs)
    for index, worker_id in enumerate(workers):
        expected = sum(batch_sizes(index))
        events = store.get_transcript(worker_id)
        assert [e.seq for e in events] == list(range(1, expected + 1))
        assert [e.content["text"] for e in events] == [f"{worker_id}:{n}" for n in range(expected)]
        assert store.get_worker(worker_id).last_seq == expected


@pytest.mark.slow
def test_killed_worker_leaves_a_readable_transcript_and_is_marked_failed(
    store: Store, store_target: StoreTarget
) -> None:
    run_id = store.create_run("crash")
    worker_id = "w-crash"
    proc = ctx.Process(target=work_until_killed, args=(store_target, run_id, worker_id))
    store.close()
    proc.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if store.get_worker(worker_id).last_seq >= 5:
                break
        except Exception:
            pass
        time.sleep(0.05)
    assert proc.pid is not None
    os.kill(proc.pid, signal.SIGKILL)
    proc.join(30)
    assert proc.exitcode == -signal.SIGKILL

    assert store.get_worker(worker_id).status == "running"  # nobody said otherwise yet
    partial = store.get_transcript(worker_id)
    assert len(partial) >= 5
    assert [e.seq for e in partial] == list(range(1, len(partial) + 1))
    assert [e.content["text"] for e in partial] == [f"step {i}" for i in range(len(partial))]

    assert store.mark_stale_workers_failed(timedelta(hours=1)) == [worker_id]
    crashed = store.get_worker(worker_id)
    assert crashed.status == "failed" and crashed.finished_at is not None
    assert store.get_transcript(worker_id)[-1].content["status"] == "failed"


@pytest.mark.slow
def test_processes_opening_a_fresh_store_together_migrate_it_once(tmp_path: object) -> None:
    from pathlib import Path

    target = StoreTarget("sqlite", None, Path(str(tmp_path)) / "fresh")
    _run_all([ctx.Process(target=open_fresh, args=(target,)) for _ in range(4)])
    with target.open() as store:
        assert store.list_runs() == []
