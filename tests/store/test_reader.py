"""The store's read threads: a worker's read waits for its own queued writes and sees them, on
SQLite and PostgreSQL; a failed write stays the flush's to raise."""

from __future__ import annotations

import asyncio
import threading
from functools import partial

import pytest

from agents.store import Store, UnknownWorkerError, WorkerUpdate

pytestmark = pytest.mark.anyio


def hold_writer(store: Store, worker: str) -> threading.Event:
    """Keep the writer thread busy with this worker's first queued write until the event is
    set, so every write queued after it is still pending."""
    released = threading.Event()
    store.writer.write(worker, lambda: released.wait(10))
    return released


async def test_a_workers_read_sees_the_writes_it_queued_before(store: Store, worker: str) -> None:
    released = hold_writer(store, worker)
    store.writer.write(worker, partial(store.add_agent_note, worker, "queued before the read"))
    threading.Timer(0.2, released.set).start()

    notes = await store.reader.run(worker, store.list_agent_notes, worker_id=worker)

    assert [n.body for n in notes] == ["queued before the read"]


async def test_a_read_for_no_worker_does_not_wait_for_any_queued_write(
    store: Store, worker: str
) -> None:
    released = hold_writer(store, worker)
    store.writer.write(worker, partial(store.add_agent_note, worker, "still queued"))
    try:
        read = store.reader.run(None, store.list_agent_notes, worker_id=worker)
        assert await asyncio.wait_for(read, 5) == []
    finally:
        released.set()
    await store.writer.aflush(worker)
    assert [n.body for n in store.list_agent_notes(worker_id=worker)] == ["still queued"]


async def test_a_failed_write_is_raised_by_the_next_flush_not_by_a_read(
    store: Store, worker: str
) -> None:
    store.writer.write(
        worker, partial(store.update_worker, "no-such-worker", WorkerUpdate(status="failed"))
    )

    assert (await store.reader.run(worker, store.get_worker, worker)).status == "running"
    with pytest.raises(UnknownWorkerError):
        await store.writer.aflush(worker)


async def test_a_read_cancelled_while_it_waits_for_the_writer_leaves_the_writer_working(
    store: Store, worker: str
) -> None:
    released = hold_writer(store, worker)
    read = asyncio.ensure_future(store.reader.run(worker, store.get_worker, worker))
    await asyncio.sleep(0.05)
    read.cancel()  # as a worker's wall-time budget cancels whatever it awaits
    released.set()
    store.writer.write(worker, partial(store.add_agent_note, worker, "after the cancel"))

    await asyncio.wait_for(store.writer.aflush(worker), 5)
    assert [n.body for n in store.list_agent_notes(worker_id=worker)] == ["after the cancel"]
