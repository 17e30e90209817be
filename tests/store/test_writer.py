"""The store's writer thread: each worker's writes land in order, once each, before its flush
returns, whatever fails on the way (on SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import event

from agents.json_value import JSONValue
from agents.store import NewEvent, NewWorker, Store, UnknownWorkerError, WorkerUpdate
from tests.json_access import text as as_text
from tests.store.backends import StoreTarget


@contextmanager
def failing_statements(
    store: Store, starts_with: str, times: int, *, after_commit: bool = False
) -> Iterator[list[str]]:
    """The database answers the next ``times`` statements starting with ``starts_with`` (or,
    with ``after_commit``, the commits after them) with the driver's OperationalError, as a
    lost connection would. Yields the statements that failed."""
    engine = store._db.engine
    dbapi = engine.dialect.loaded_dbapi
    failed: list[str] = []
    armed: list[bool] = []

    def before(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if len(failed) + len(armed) >= times or not statement.startswith(starts_with):
            return
        if after_commit:
            armed.append(True)
            return
        failed.append(statement)
        raise dbapi.OperationalError("server closed the connection unexpectedly")

    original = engine.dialect.do_commit

    def commit(dbapi_conn: Any) -> None:
        original(dbapi_conn)
        if armed:
            armed.pop()
            failed.append("COMMIT")
            raise dbapi.OperationalError("connection lost while the commit was answered")

    event.listen(engine, "before_cursor_execute", before)
    engine.dialect.do_commit = commit  # type: ignore[method-assign,assignment]
    try:
        yield failed
    finally:
        event.remove(engine, "before_cursor_execute", before)
        engine.dialect.do_commit = original  # type: ignore[method-assign]


def texts(store: Store, worker_id: str) -> list[tuple[int, str]]:
    return [(e.seq, as_text(e.content["text"])) for e in store.get_transcript(worker_id)]


def test_writes_of_many_workers_from_many_threads_land_in_each_workers_order(
    store: Store, worker: str
) -> None:
    run_id = store.get_worker(worker).run_id
    others = [store.create_worker(NewWorker(run_id, role_chain=["reviewer"])) for _ in range(3)]
    ids = [worker, *others]

    def one_worker(worker_id: str) -> None:
        for i in range(60):
            store.writer.append(worker_id, NewEvent("progress", f"{worker_id} {i}"))
            if i % 7 == 0:  # a write of another kind in between keeps its place
                store.writer.write(worker_id, lambda: store.heartbeat(worker_id))
        store.writer.flush(worker_id)

    threads = [threading.Thread(target=one_worker, args=(w,)) for w in ids]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for worker_id in ids:
        assert texts(store, worker_id) == [(i + 1, f"{worker_id} {i}") for i in range(60)]


def test_flush_returns_only_once_the_writes_are_in_the_store(
    store_target: StoreTarget, store: Store, worker: str
) -> None:
    args: list[JSONValue] = ["a"]
    store.writer.append(worker, NewEvent("tool_call", {"tool": "get_pull", "args": args}))
    args.append("changed later")  # what was queued is what is written
    store.writer.write(
        worker, lambda: store.update_worker(worker, WorkerUpdate(status="succeeded"))
    )
    asyncio.run(store.writer.aflush(worker))
    with store_target.open() as elsewhere:  # another connection, another pool
        assert [e.content for e in elsewhere.get_transcript(worker)] == [
            {"tool": "get_pull", "args": ["a"]}
        ]
        assert elsewhere.get_worker(worker).status == "succeeded"


def test_a_lost_connection_is_retried_and_each_event_is_written_once(
    store: Store, worker: str
) -> None:
    with failing_statements(store, "INSERT INTO transcript_events", times=2) as failed:
        for i in range(5):
            store.writer.append(worker, NewEvent("progress", f"p{i}"))
        store.writer.flush(worker)
    assert len(failed) == 2
    assert texts(store, worker) == [(i + 1, f"p{i}") for i in range(5)]
    assert store.get_worker(worker).last_seq == 5


def test_a_commit_whose_answer_was_lost_is_not_written_twice(store: Store, worker: str) -> None:
    store.writer.append(worker, NewEvent("progress", "before"))
    store.writer.flush(worker)
    with failing_statements(
        store, "INSERT INTO transcript_events", times=1, after_commit=True
    ) as failed:
        store.writer.append(worker, NewEvent("progress", "during"))
        store.writer.flush(worker)
    assert failed == ["COMMIT"]
    assert texts(store, worker) == [(1, "before"), (2, "during")]


def test_a_write_that_cannot_be_done_is_raised_by_the_workers_next_flush_only(
    store: Store, worker: str
) -> None:
    store.writer.append("w-never-registered", NewEvent("progress", "lost"))
    store.writer.append(worker, NewEvent("progress", "kept"))
    with pytest.raises(UnknownWorkerError):
        store.writer.flush("w-never-registered")
    store.writer.flush(worker)  # another worker's failure is not this one's
    store.writer.flush("w-never-registered")  # raised once: the next flush is clean
    assert texts(store, worker) == [(1, "kept")]


def test_writes_after_a_failed_one_still_land_in_order(store: Store, worker: str) -> None:
    def refuse() -> None:
        store.update_worker(worker, WorkerUpdate(status="no-such-status"))

    store.writer.append(worker, NewEvent("progress", "first"))
    store.writer.write(worker, refuse)
    store.writer.append(worker, NewEvent("progress", "second"))
    with pytest.raises(Exception, match="no-such-status"):
        store.writer.flush(worker)
    assert texts(store, worker) == [(1, "first"), (2, "second")]


def test_closing_the_store_writes_everything_still_queued(
    store_target: StoreTarget, worker: str, store: Store
) -> None:
    for i in range(50):
        store.writer.append(worker, NewEvent("progress", f"p{i}"))
    store.close()
    with store_target.open() as reopened:
        assert len(reopened.get_transcript(worker)) == 50
        with reopened._db.read() as conn:
            rows = conn.execute(sa.text("SELECT count(*) FROM transcript_events")).scalar_one()
        assert rows == 50
