"""The memory a session starts with and what it recalls each turn, read off the event loop.

Both read many rows and redact each (a thousand memories took ~60 ms on SQLite), which on the
flow's shared event loop held up every other worker of the run; both run in the store's read
threads (:class:`agents.store.reader.StoreReader`), after this worker's own queued writes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agents.memory.feedback import accepted_learnings
from agents.memory.snapshot import MemorySnapshot, frozen_snapshot
from agents.worker.briefing import learnings_briefing

if TYPE_CHECKING:
    from agents.memory.operational import AgentMemory
    from agents.store.store import Store

RECALL_HITS = 3


@dataclass(frozen=True)
class StartingMemory:
    """The frozen snapshot for the cached prefix and the first turn's learnings briefing."""

    snapshot: MemorySnapshot
    briefing: str


async def starting_memory(store: Store, memory: AgentMemory, repo: str) -> StartingMemory:
    """Where the last session left off, the frozen snapshot and the accepted learnings."""

    def read() -> tuple[MemorySnapshot, str]:
        previous = memory.previous_continuity()
        snapshot = frozen_snapshot(store, repo, memory.role, continuity=previous)
        return snapshot, learnings_briefing(accepted_learnings(store, repo))

    snapshot, briefing = await store.reader.run(memory.worker_id, read)
    return StartingMemory(snapshot, briefing)


def recaller(
    store: Store, memory: AgentMemory, snapshot: MemorySnapshot
) -> Callable[[str], Awaitable[Sequence[str]]]:
    """The session's per-turn recall: memory written after the session started (the snapshot
    already holds the rest), notes left out."""
    frozen = {f"memory:{i}" for i in snapshot.memory_ids}

    def read(query: str) -> list[str]:
        hits = memory.recall(query, limit=RECALL_HITS)
        return [h.text for h in hits if h.source not in frozen and h.kind != "note"]

    async def recall(query: str) -> Sequence[str]:
        return await store.reader.run(memory.worker_id, read, query)

    return recall
