"""The frozen memory snapshot taken once at worker start for the cached prompt prefix.

It is byte-stable for a given set of memories (no timestamps, fixed order) so the prefix hash
and the provider's prompt cache survive; it never changes during a session even if a person
edits memory meanwhile (later changes reach the worker only through per-turn recall).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from xml.sax.saxutils import escape, quoteattr

from agents.memory.ports import MemoryBackend, MemoryRow
from agents.redact import redact

DEFAULT_MAX_CHARS = 4_000


@dataclass(frozen=True)
class MemorySnapshot:
    repo: str | None
    role: str | None
    text: str
    hash: str
    memory_ids: tuple[int, ...]
    omitted: int
    taken_at: datetime


def _specificity(m: MemoryRow) -> int:
    # Most specific first, so a tight budget drops global advice before repo+role advice.
    return (m.repo is None) * 2 + (m.role is None)


def _line(m: MemoryRow) -> str:
    body = " ".join(redact(m.body).split())
    return f"- [{m.kind} #{m.id}] {escape(body)}"


def frozen_snapshot(
    backend: MemoryBackend,
    repo: str | None,
    role: str | None,
    *,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> MemorySnapshot:
    rows = sorted(
        backend.list_memories(repo=repo, role=role, include_global=True),
        key=lambda m: (_specificity(m), m.id),
    )
    attrs = f"repo={quoteattr(repo or '*')} role={quoteattr(role or '*')}"
    head, tail = f"<memory {attrs}>", "</memory>"
    lines: list[str] = []
    ids: list[int] = []
    used = len(head) + len(tail) + 2
    for m in rows:
        line = _line(m)
        if used + len(line) + 1 > max_chars:
            break
        lines.append(line)
        ids.append(m.id)
        used += len(line) + 1
    omitted = len(rows) - len(ids)
    if omitted:
        lines.append(f"- ({omitted} more not shown; use recall)")
    if not rows:
        lines.append("- (no memories for this scope)")
    text = "\n".join([head, *lines, tail])
    digest = "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
    return MemorySnapshot(
        repo=repo,
        role=role,
        text=text,
        hash=digest,
        memory_ids=tuple(ids),
        omitted=omitted,
        taken_at=datetime.now(UTC),
    )
