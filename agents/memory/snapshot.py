"""The frozen memory snapshot taken once at worker start for the cached prompt prefix.

It is byte-stable for a given set of memories (no timestamps, fixed order) so the prefix hash
and the provider's prompt cache survive; it never changes during a session even if a person
edits memory meanwhile (later changes reach the worker only through per-turn recall).

It also carries where the previous session of the same role on the same repository (and pull
request) left off: its continuity, bounded and escaped so it can open or close no tag. Learnings
read from review feedback are quoted text by other people and never enter it (they reach the
model delimited as untrusted, in the first user turn).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from xml.sax.saxutils import escape, quoteattr

from agents.memory.ports import MemoryBackend, MemoryRow, NoteRow
from agents.redact import redact

DEFAULT_MAX_CHARS = 4_000
CONTINUITY_MAX_CHARS = 1_500


@dataclass(frozen=True)
class MemorySnapshot:
    repo: str | None
    role: str | None
    text: str
    hash: str
    memory_ids: tuple[int, ...]
    omitted: int
    taken_at: datetime
    continuity_id: int | None = None


def _specificity(m: MemoryRow) -> int:
    # Most specific first, so a tight budget drops global advice before repo+role advice.
    return (m.repo is None) * 2 + (m.role is None)


def _line(m: MemoryRow) -> str:
    body = " ".join(redact(m.body).split())
    return f"- [{m.kind} #{m.id}] {escape(body)}"


def _continuity(note: NoteRow | None, max_chars: int) -> str:
    if note is None:
        return ""
    body = " ".join(redact(note.body).split())
    if len(body) > max_chars:
        body = body[: max_chars - 1] + "…"
    where = f"worker:{note.worker_id}" + (f" pr:{note.pr_number}" if note.pr_number else "")
    return (
        f"<continuity from={quoteattr(where)}>\n"
        "Where the previous session of this role here left off (your own earlier notes; "
        f"check them against what you read now):\n{escape(body)}\n</continuity>"
    )


def frozen_snapshot(
    backend: MemoryBackend,
    repo: str | None,
    role: str | None,
    *,
    max_chars: int = DEFAULT_MAX_CHARS,
    continuity: NoteRow | None = None,
    continuity_chars: int = CONTINUITY_MAX_CHARS,
) -> MemorySnapshot:
    rows = sorted(
        (
            m
            for m in backend.list_memories(repo=repo, role=role, include_global=True)
            if m.kind != "learning"
        ),
        key=lambda m: (_specificity(m), m.id),
    )
    attrs = f"repo={quoteattr(repo or '*')} role={quoteattr(role or '*')}"
    head, tail = f"<memory {attrs}>", "</memory>"
    previous = _continuity(continuity, min(continuity_chars, max_chars // 2))
    if previous:
        tail += "\n" + previous
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
        continuity_id=continuity.id if previous and continuity is not None else None,
    )
