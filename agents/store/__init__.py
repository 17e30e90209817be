"""The shared SQL store (SQLite or PostgreSQL) for runs, transcripts, audit and memory rows."""

from agents.event_kinds import EVENT_KINDS
from agents.store.base import StoreError, UnknownRunError, UnknownWorkerError
from agents.store.engine import StoreConfigError
from agents.store.memory_rows import UnknownMemoryError
from agents.store.records import (
    WORKER_STATUSES,
    AuditRecord,
    DeliveryRecord,
    EventRecord,
    LlmCallRecord,
    MemoryRecord,
    NewEvent,
    NoteRecord,
    PruneCounts,
    RateLimitRecord,
    ReviewKeyRecord,
    RunRecord,
    WorkerRecord,
)
from agents.store.render import render_transcript, summarise_tool_event
from agents.store.store import Store

__all__ = [
    "EVENT_KINDS",
    "WORKER_STATUSES",
    "AuditRecord",
    "DeliveryRecord",
    "EventRecord",
    "LlmCallRecord",
    "MemoryRecord",
    "NewEvent",
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
    "render_transcript",
    "summarise_tool_event",
]
