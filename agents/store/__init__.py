"""The shared SQL store (SQLite or PostgreSQL) for runs, transcripts, audit and memory rows.

- ``base.py``: What every part of the store shares: the database handle, the clock and write hygiene
- ``calls.py``: Hidden runtime records of outside calls: LLM usage, prompt prefixes, GitHub calls
  with the audit log of mutations, and rate-limit snapshots
- ``copy.py``: Moving a whole store to another database (``swarm store copy``): one transaction,
  ids, JSON null and sequences kept
- ``deliveries.py``: Webhook deliveries: the first sight of an ``X-GitHub-Delivery`` id (and of its
  signed body) wins, atomically
- ``engine.py``: Engines for the shared store: SQLite (default, a file under the data dir) or
  PostgreSQL
- ``memory_rows.py``: Rows behind the memory surfaces: user-visible memories (superseded, never
  overwritten) and append-only agent notes
- ``migrate.py``: Programmatic Alembic upgrade, run by ``Store.open``
- ``migrations/``: Package marker for the Alembic scripts; ``versions/000N_<what>.py`` hold one
  migration each
- ``reader.py``: Store reads off the event loop: a worker's reads run in store threads, after that
  worker's queued writes
- ``records.py``: Plain read-back rows handed out by the store (frozen dataclasses, no SQLAlchemy
  objects)
- ``render.py``: Read-back as text for the CLI (``swarm transcript``): one line per event, tools
  compact
- ``retention.py``: Retention for hidden runtime records
- ``reviews.py``: Review idempotency keys: at most one review per (repo, PR, head SHA, role), across
  workers
- ``runs.py``: Swarm runs and their workers: lifecycle, heartbeats and crash recovery
- ``schema.py``: Tables of the shared store (SQLAlchemy Core)
- ``state_rows.py``: Shared state rows: one JSON document per identity, read and rewritten under its
  row lock
- ``store.py``: The shared store: one object workers, flows and the CLI use to write and read
  everything
- ``transcript.py``: Per-worker transcripts: gap-free sequenced appends, read-back and scoped full-
  text search
- ``writer.py``: Store writes behind the event loop: one writer thread per store, each worker's
  writes in the order it made them, transcript appends batched, and a flush a worker awaits before
  it reports
"""

from agents.event_kinds import EVENT_KINDS
from agents.store.base import StoreError, UnknownRunError, UnknownWorkerError
from agents.store.engine import StoreConfigError
from agents.store.memory_rows import UnknownMemoryError
from agents.store.records import (
    WORKER_STATUSES,
    AuditRecord,
    DeliveryEnd,
    DeliveryRecord,
    EventRecord,
    GitHubCall,
    LlmCall,
    LlmCallRecord,
    MemoryRecord,
    NewDelivery,
    NewEvent,
    NewWorker,
    NoteRecord,
    PruneCounts,
    RateLimitRecord,
    ReviewKeyRecord,
    RunRecord,
    WorkerRecord,
    WorkerUpdate,
)
from agents.store.render import render_transcript, summarise_tool_event
from agents.store.store import Store

__all__ = [
    "EVENT_KINDS",
    "WORKER_STATUSES",
    "AuditRecord",
    "DeliveryEnd",
    "DeliveryRecord",
    "EventRecord",
    "GitHubCall",
    "LlmCall",
    "LlmCallRecord",
    "MemoryRecord",
    "NewDelivery",
    "NewEvent",
    "NewWorker",
    "NoteRecord",
    "PruneCounts",
    "RateLimitRecord",
    "ReviewKeyRecord",
    "RunRecord",
    "Store",
    "StoreConfigError",
    "StoreError",
    "UnknownMemoryError",
    "UnknownRunError",
    "UnknownWorkerError",
    "WorkerRecord",
    "WorkerUpdate",
    "render_transcript",
    "summarise_tool_event",
]
