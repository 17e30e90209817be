"""A worker's memory reads leave the event loop free: while the database makes them wait (on
PostgreSQL a lock another connection holds, on SQLite a slow driver), the other coroutines of
the loop keep running, and the read still answers in full once the database does."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import pytest
import sqlalchemy as sa
from sqlalchemy import event

from agents.memory import AgentMemory
from agents.store import NewWorker, Store
from agents.worker.session_memory import recaller, starting_memory
from tests.store.backends import StoreTarget

pytestmark = pytest.mark.anyio

T = TypeVar("T")
HOLD_S = 0.5
TICK_S = 0.01
REPO, ROLE = "octo/demo", "reviewer"


@contextmanager
def memories_held(store: Store, target: StoreTarget, seconds: float) -> Iterator[None]:
    """Reads of the memories table wait ``seconds`` (released from a thread of its own, so a
    blocked event loop cannot keep them waiting for ever)."""
    if target.backend == "postgresql":
        assert target.url is not None
        engine = sa.create_engine(target.url)
        conn = engine.connect()
        tx = conn.begin()
        conn.exec_driver_sql("LOCK TABLE memories IN ACCESS EXCLUSIVE MODE")
        timer = threading.Timer(seconds, tx.commit)
        timer.start()
        try:
            yield
        finally:
            timer.join()
            conn.close()
            engine.dispose()
        return

    def slow(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if "FROM memories" in statement:
            time.sleep(seconds)

    event.listen(store._db.engine, "before_cursor_execute", slow)
    try:
        yield
    finally:
        event.remove(store._db.engine, "before_cursor_execute", slow)


async def ticks_while(read: Awaitable[T]) -> tuple[T, int]:
    """What ``read`` gave, and how often another coroutine of the loop ran meanwhile."""
    ticks = 0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not done.is_set():
            await asyncio.sleep(TICK_S)
            ticks += 1

    task = asyncio.create_task(ticker())
    try:
        return await read, ticks
    finally:
        done.set()
        await task


def seeded(store: Store) -> AgentMemory:
    run = store.create_run("test")
    worker = store.create_worker(NewWorker(run, role_chain=[ROLE], status="running"))
    store.add_memory("fact", "Maintainers prefer small pull requests", author="m", repo=REPO)
    return AgentMemory(store, worker, run_id=run, repo=REPO, role=ROLE)


async def test_the_session_start_snapshot_lets_other_workers_run_while_it_reads(
    store: Store, store_target: StoreTarget
) -> None:
    memory = seeded(store)

    with memories_held(store, store_target, HOLD_S):
        started = time.perf_counter()
        start, ticks = await ticks_while(starting_memory(store, memory, REPO))
        waited = time.perf_counter() - started

    assert waited >= HOLD_S * 0.9  # the read really waited for the database
    assert ticks >= 10, f"the loop ran {ticks} times in {waited:.2f} s"
    assert "Maintainers prefer small pull requests" in start.snapshot.text


async def test_recall_lets_other_workers_run_while_it_reads(
    store: Store, store_target: StoreTarget
) -> None:
    memory = seeded(store)
    start = await starting_memory(store, memory, REPO)
    recall = recaller(store, memory, start.snapshot)
    store.add_memory("fact", "Small pull requests merge faster", author="m", repo=REPO)

    with memories_held(store, store_target, HOLD_S):
        hits, ticks = await ticks_while(recall("small pull requests"))

    assert ticks >= 10, f"the loop ran {ticks} times"
    assert list(hits) == ["Small pull requests merge faster"]  # the snapshot holds the other
