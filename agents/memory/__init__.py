"""Memory surfaces: learnings from feedback, agent operational memory, bounded history retrieval.

Works over any backend that fits :mod:`agents.memory.ports` (the store). The memories a person
lists, adds, edits and deletes are the store's rows (:mod:`agents.store.memory_rows`), which
``swarm memory`` reads and writes with its own checks of the flags.

- ``feedback.py``: Learnings from feedback on the bot's review comments: classify a reply or
  reaction, word it as a quoted fact, propose it once
- ``history.py``: ``history_search``: the bounded, redacting history-retrieval tool workers call
- ``learning.py``: Reading what people said about the bot's review comments, and turning it into
  proposals
- ``operational.py``: Agent operational memory: append-only notes and a per-worker continuity
  summary, plus ``recall`` for the per-turn layer
- ``ports.py``: What the memory surfaces need from the store, as structural types
- ``snapshot.py``: The frozen memory snapshot taken once at worker start for the cached prompt
  prefix
"""

from agents.memory.history import HistoryHit, HistorySearchError, format_hits, history_search
from agents.memory.operational import AgentMemory, RecallHit, recall
from agents.memory.snapshot import MemorySnapshot, frozen_snapshot

__all__ = [
    "AgentMemory",
    "HistoryHit",
    "HistorySearchError",
    "MemorySnapshot",
    "RecallHit",
    "format_hits",
    "frozen_snapshot",
    "history_search",
    "recall",
]
