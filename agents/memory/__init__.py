"""Memory surfaces: user-visible memory, agent operational memory, bounded history retrieval.

Works over any backend that fits :mod:`agents.memory.ports` (the store).
"""

from agents.memory.history import HistoryHit, HistorySearchError, format_hits, history_search
from agents.memory.operational import AgentMemory, RecallHit, recall
from agents.memory.snapshot import MemorySnapshot, frozen_snapshot
from agents.memory.user_memory import MemoryInputError, UserMemory

__all__ = [
    "AgentMemory",
    "HistoryHit",
    "HistorySearchError",
    "MemoryInputError",
    "MemorySnapshot",
    "RecallHit",
    "UserMemory",
    "format_hits",
    "frozen_snapshot",
    "history_search",
    "recall",
]
