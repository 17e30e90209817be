"""Store calls a worker needs an answer from, run off the event loop.

All workers of a run share the flow's one event loop: a query run on it (on PostgreSQL a network
round trip, on SQLite a file read plus our redaction of every row) held up every other worker
for its whole duration. :meth:`StoreReader.run` runs the call in one of a few store threads
instead, each with its own pooled connection (the store checks one out per call and never
shares it across threads).

A worker's own writes wait in the writer thread's queue (:mod:`agents.store.writer`), so a read
could overtake them. Given the worker's id, ``run`` first waits until the writes it queued so
far are in the store: a worker always reads its own writes.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, ParamSpec, TypeVar

if TYPE_CHECKING:
    from agents.store.writer import StoreWriter

P = ParamSpec("P")
T = TypeVar("T")

# Well under either backend's connection pool (SQLite 16, PostgreSQL 10 + 20 overflow), so the
# writer and the CLI's own calls always find a connection.
THREADS = 8


class StoreReader:
    """Thread-safe; the threads start on the first call, and again in a forked child."""

    def __init__(self, writer: StoreWriter, threads: int = THREADS) -> None:
        self._writer = writer
        self._threads = threads
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._pid = os.getpid()

    async def run(
        self, worker_id: str | None, call: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """``call(*args, **kwargs)`` in a store thread, after ``worker_id``'s queued writes
        (None: a read that no worker's queued write can change)."""
        if worker_id is not None:
            await self._writer.settled(worker_id)
        # Like ``asyncio.to_thread``: the call sees the caller's context variables.
        bound = functools.partial(contextvars.copy_context().run, call, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self._executor(), bound)

    def close(self) -> None:
        """Wait for the calls under way, then stop the threads."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None and self._pid == os.getpid():
            pool.shutdown(wait=True)

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pid != os.getpid():  # a forked child: the parent's threads are not here
                self._pool, self._pid = None, os.getpid()
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="store-read")
            return self._pool
