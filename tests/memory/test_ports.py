"""The store fits the structural ports the memory layer is written against (checked by mypy:
``uv run mypy tests/memory/test_ports.py``) and works through them at run time."""

from __future__ import annotations

from agents.memory.ports import HistoryBackend, MemoryBackend
from agents.store import Store


def test_store_serves_as_memory_and_history_backend(store: Store, worker: str) -> None:
    memory: MemoryBackend = store
    history: HistoryBackend = store
    row = memory.add_memory("fact", "x", author="alice")
    assert memory.memory_by_source("never-written") is None
    assert [m.body for m in memory.list_memories()] == [row.body] == ["x"]
    assert history.get_worker(worker).id == worker
