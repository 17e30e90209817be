"""Where a memory came from: a noun the store (which writes memories) and memory (which reads
them from feedback) both import, never each other."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class MemoryOrigin:
    """The run and worker that wrote a memory, and the pull request and feedback it was read
    from: ``source`` is what is kept of that feedback, ``source_key`` its one key (a memory with
    a key is written once, however often its feedback is read)."""

    run_id: str | None = None
    worker_id: str | None = None
    pr_number: int | None = None
    source: Mapping[str, object] | None = None
    source_key: str | None = None
