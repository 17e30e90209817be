"""Store writes behind the event loop: one writer thread per store, each worker's writes in the
order it made them, transcript appends batched, and a flush a worker awaits before it reports.

A worker's recorder hands its writes here instead of running SQL on the flow's event loop, where
every write held up all the other workers of the run. The thread takes whatever has queued up
since its last pass and writes each worker's consecutive transcript events as one transaction
(gap-free sequence numbers, as :meth:`Store.append_events` gives them).

A write that fails on a lost connection or a locked database is retried: its transaction was
rolled back, so the retry writes it once. For a transcript batch the writer also checks that
the worker's sequence counter did not move before retrying, so a commit whose answer was lost
is not written twice. Any other failure is kept for the worker and raised by its next flush, as
a synchronous write would have raised; the writes after it still happen in order.
"""

from __future__ import annotations

import asyncio
import atexit
import dataclasses
import logging
import os
import queue
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import sqlalchemy as sa

from agents.json_value import JSONObject, JSONValue
from agents.store.records import NewEvent

if TYPE_CHECKING:
    from agents.store.store import Store

log = logging.getLogger("agents.store.writer")

RETRIES = 4
RETRY_PAUSE_S = 0.05
# At most this many queued writes are taken in one pass (bounds a batch's transaction).
BATCH = 256
# Workers whose last sequence number is remembered (for the lost-commit check).
MAX_TRACKED = 10_000


@dataclass
class _Job:
    worker_id: str
    event: NewEvent | None = None
    write: Callable[[], object] | None = None
    flushed: Future[None] | None = None
    # A barrier (a read waiting for the worker's writes) leaves a failure for the flush.
    barrier: bool = False


@dataclass
class _Pass:
    """One pass over the queue: events held per worker until another job of theirs comes."""

    events: dict[str, list[NewEvent]] = field(default_factory=dict)


def _transient(exc: Exception) -> bool:
    if isinstance(exc, sa.exc.OperationalError):
        return True
    return isinstance(exc, sa.exc.DBAPIError) and exc.connection_invalidated


class StoreWriter:
    """Thread-safe; ``append_event`` and ``write`` never block on the database."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()
        # The first write error of each worker, raised by its next flush.
        self._errors: dict[str, Exception] = {}
        # The sequence number of each worker's last event this writer wrote.
        self._last_seq: dict[str, int] = {}
        # A process that ends without closing its store still writes what it queued.
        atexit.register(_close_at_exit, weakref.ref(self))

    # -- the worker's side --------------------------------------------------------------------

    def append(self, worker_id: str, event: NewEvent) -> None:
        """Queue one transcript event (its content is copied now: later changes do not count)."""
        if not isinstance(event.content, str):
            event = dataclasses.replace(event, content=_copy(event.content))
        self._put(_Job(worker_id, event=event))

    def write(self, worker_id: str, write: Callable[[], object]) -> None:
        """Queue any other write of this worker, run after its earlier ones."""
        self._put(_Job(worker_id, write=write))

    def flush(self, worker_id: str) -> None:
        """Wait until this worker's queued writes are in the store; raise its first failure."""
        self._flush_future(worker_id).result()

    async def aflush(self, worker_id: str) -> None:
        """:meth:`flush` for the event loop: other workers run while this one waits."""
        await asyncio.wrap_future(self._flush_future(worker_id))

    async def settled(self, worker_id: str) -> None:
        """Wait until this worker's writes queued so far are in the store (or have failed: a
        failure is still raised by its next flush, not here). A read after it sees them."""
        done: Future[None] = Future()
        self._put(_Job(worker_id, flushed=done, barrier=True))
        await asyncio.wrap_future(done)

    def close(self) -> None:
        """Write everything queued, then stop the thread."""
        with self._lock:
            thread, self._thread = self._thread, None
            if thread is None or self._pid != os.getpid():
                return
            self._queue.put(None)
        thread.join()

    # -- the thread's side --------------------------------------------------------------------

    def _flush_future(self, worker_id: str) -> Future[None]:
        done: Future[None] = Future()
        self._put(_Job(worker_id, flushed=done))
        return done

    def _put(self, job: _Job) -> None:
        with self._lock:
            if self._pid != os.getpid():  # a forked child: the parent's thread is not here
                self._queue, self._thread, self._pid = queue.SimpleQueue(), None, os.getpid()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="store-writer", daemon=True)
                self._thread.start()
            self._queue.put(job)

    def _run(self) -> None:
        stop = False
        while not stop:
            jobs = [self._queue.get()]
            while len(jobs) < BATCH:
                try:
                    jobs.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = None in jobs
            self._pass([job for job in jobs if job is not None])

    def _pass(self, jobs: list[_Job]) -> None:
        held = _Pass()
        for job in jobs:
            if job.event is not None:
                held.events.setdefault(job.worker_id, []).append(job.event)
                continue
            self._write_events(job.worker_id, held.events.pop(job.worker_id, []))
            if job.write is not None:
                self._attempt(job.worker_id, job.write)
            elif job.flushed is not None and job.flushed.set_running_or_notify_cancel():
                # (A waiter cancelled meanwhile, e.g. by its worker's wall time, takes no answer:
                # answering it would kill this thread. Its failure stays for the next flush.)
                error = None if job.barrier else self._errors.pop(job.worker_id, None)
                if error is None:
                    job.flushed.set_result(None)
                else:
                    job.flushed.set_exception(error)
        for worker_id, events in held.events.items():
            self._write_events(worker_id, events)

    def _write_events(self, worker_id: str, events: list[NewEvent]) -> None:
        if not events:
            return

        def append() -> None:
            seqs = self._store.append_events(worker_id, events)
            if len(self._last_seq) >= MAX_TRACKED:  # a long-lived process: forget old workers
                self._last_seq.clear()
            self._last_seq[worker_id] = seqs[-1]

        def written() -> bool:
            # A commit whose answer was lost: the counter already moved by this batch.
            before = self._last_seq.get(worker_id)
            if before is None or self._store.get_worker(worker_id).last_seq != before + len(events):
                return False
            self._last_seq[worker_id] = before + len(events)
            return True

        self._attempt(worker_id, append, written)

    def _attempt(
        self,
        worker_id: str,
        write: Callable[[], object],
        written: Callable[[], bool] = lambda: False,
    ) -> None:
        for attempt in range(RETRIES):
            try:
                if attempt == 0 or not written():
                    write()
                return
            except Exception as exc:
                if _transient(exc) and attempt < RETRIES - 1:
                    time.sleep(RETRY_PAUSE_S * 2**attempt)
                    continue
                log.warning("a store write of worker %s failed: %s", worker_id, type(exc).__name__)
                self._errors.setdefault(worker_id, exc)
                return


def _close_at_exit(ref: weakref.ref[StoreWriter]) -> None:
    writer = ref()
    if writer is not None:
        writer.close()


def _copy(value: Mapping[str, JSONValue]) -> JSONObject:
    """A copy deep enough that the caller may reuse its dicts and lists afterwards."""

    def plain(item: JSONValue) -> JSONValue:
        if isinstance(item, Mapping):
            return {k: plain(v) for k, v in item.items()}
        if isinstance(item, (list, tuple)):
            return [plain(v) for v in item]
        return item

    return {str(k): plain(v) for k, v in value.items()}
