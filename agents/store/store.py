"""The shared store: one object workers, flows and the CLI use to write and read everything.

Every text and JSON value is passed through :mod:`agents.redact` before it reaches a table.
"""

from __future__ import annotations

from pathlib import Path

from agents.store.calls import CallsMixin
from agents.store.deliveries import DeliveriesMixin
from agents.store.engine import Database, make_engine
from agents.store.memory_rows import MemoryRowsMixin
from agents.store.migrate import upgrade_to_head
from agents.store.reader import StoreReader
from agents.store.retention import RetentionMixin
from agents.store.reviews import ReviewsMixin
from agents.store.runs import RunsMixin
from agents.store.state_rows import StateRowsMixin
from agents.store.transcript import TranscriptMixin
from agents.store.writer import StoreWriter


class Store(
    TranscriptMixin,
    RunsMixin,
    CallsMixin,
    ReviewsMixin,
    MemoryRowsMixin,
    RetentionMixin,
    StateRowsMixin,
    DeliveriesMixin,
):
    """Thread-safe; open one per process (it detects a fork and reconnects). ``writer`` takes
    writes that need no answer off the caller's thread (a worker's record); ``reader`` runs the
    calls a worker needs an answer from off the event loop, after that worker's writes."""

    def __init__(self, db: Database) -> None:
        super().__init__(db)
        self.writer = StoreWriter(self)
        self.reader = StoreReader(self.writer)

    @classmethod
    def open(cls, url: str | None = None, data_dir: Path = Path(".swarm")) -> Store:
        """Open (and migrate to the latest schema) the store at ``url``, or the SQLite file
        ``<data_dir>/swarm.db`` when ``url`` is None."""
        db = Database(make_engine(url, data_dir))
        try:
            upgrade_to_head(db)
        except Exception:
            db.dispose()
            raise
        return cls(db)

    def close(self) -> None:
        self.reader.close()
        self.writer.close()
        self._db.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc_info: object) -> None:
        self.close()
