"""Child-process bodies for the multi-process tests (importable, so ``spawn`` can run them)."""

from __future__ import annotations

import threading
import time

from agents.store import NewEvent, NewWorker
from tests.store.backends import StoreTarget

APPENDS_PER_THREAD = 40


def batch_sizes(worker_index: int) -> list[int]:
    """A fixed, varied mix of single appends and small batches per worker."""
    return [1 + (worker_index + i) % 3 for i in range(APPENDS_PER_THREAD)]


def append_from_threads(target: StoreTarget, worker_ids: list[str], first_index: int) -> None:
    """One process: a thread per worker, each appending its own numbered events."""
    store = target.open()
    errors: list[BaseException] = []

    def run(worker_id: str, index: int) -> None:
        try:
            n = 0
            for size in batch_sizes(index):
                store.append_events(
                    worker_id, [NewEvent("progress", f"{worker_id}:{n + j}") for j in range(size)]
                )
                n += size
        except BaseException as exc:
            errors.append(exc)

    threads = [
        threading.Thread(target=run, args=(w, first_index + i)) for i, w in enumerate(worker_ids)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    store.close()
    if errors:
        raise errors[0]


def work_until_killed(target: StoreTarget, run_id: str, worker_id: str) -> None:
    """A worker that records events forever; the test kills it mid-session."""
    store = target.open()
    store.create_worker(
        NewWorker(run_id, role_chain=["reviewer"], status="running", worker_id=worker_id)
    )
    i = 0
    while True:
        store.append_event(worker_id, "assistant_turn", f"step {i}")
        i += 1
        time.sleep(0.01)


def open_fresh(target: StoreTarget) -> None:
    target.open().close()
