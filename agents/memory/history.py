"""``history_search``: the bounded, redacting history-retrieval tool workers call.

Scoped to the caller's own session (or, when its role allows, the sessions of its run that worked
on the same repository as the same identity: a run over several repositories must not let a PR in
one steer a worker into quoting another's), newest first, short excerpts only: tool payloads are
summarised, and every excerpt is re-redacted so that no base64 blob, credential or magic link
comes back even from rows written before a rule existed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from agents.event_kinds import EVENT_KINDS, TOOL_EVENT_KINDS
from agents.memory.ports import EventRow, HistoryBackend, WorkerRow
from agents.redact import redact

DEFAULT_LIMIT = 10
MAX_LIMIT = 50
EXCERPT_CHARS = 240
PREVIEW_CHARS = 80
Scope = Literal["session", "run"]


class HistorySearchError(ValueError):
    """The request was refused; the message tells the model what to change."""


@dataclass(frozen=True)
class HistoryHit:
    citation: str  # worker:<id>#<seq>
    worker_id: str
    seq: int
    kind: str
    created_at: datetime
    excerpt: str


def _flat(text: str) -> str:
    return " ".join(redact(text).split())


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _around(text: str, query: str | None, limit: int) -> str:
    """A window of ``text`` around the first query word, so the excerpt shows why it matched."""
    if not query or len(text) <= limit:
        return _clip(text, limit)
    lowered = text.lower()
    positions = [lowered.find(w.lower()) for w in query.split() if w]
    found = [p for p in positions if p >= 0]
    if not found:
        return _clip(text, limit)
    start = max(0, min(found) - limit // 4)
    window = text[start : start + limit - 2]
    return ("…" if start else "") + window + ("…" if start + len(window) < len(text) else "")


def _payload(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def _tool_summary(content: Mapping[str, object]) -> str:
    name = str(content.get("name") or content.get("tool") or "tool")
    status = str(content.get("status") or ("error" if content.get("is_error") else "ok"))
    body = _payload(content.get("output", content.get("input", content.get("text", content))))
    preview = _clip(_flat(body), PREVIEW_CHARS)
    return f'{name} status={status} size={len(body)}B preview="{preview}"'


def _excerpt(event: EventRow, query: str | None) -> str:
    if event.kind in TOOL_EVENT_KINDS:
        return _tool_summary(event.content)
    text = event.content.get("text")
    body = text if isinstance(text, str) else event.search_text
    return _around(_flat(body), query, EXCERPT_CHARS)


def history_search(
    backend: HistoryBackend,
    caller_worker_id: str,
    query: str | None = None,
    limit: int = DEFAULT_LIMIT,
    before_seq: int | None = None,
    include_tool_events: bool = False,
    scope: Scope = "session",
    allow_run_scope: bool = False,
) -> list[HistoryHit]:
    """Search the caller's own history. ``limit`` above 50 is capped at 50; ``before_seq``
    pages back (pass the smallest seq of the previous page)."""
    if limit < 1:
        raise HistorySearchError(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    limit = min(limit, MAX_LIMIT)
    if scope not in ("session", "run"):
        raise HistorySearchError(f"scope must be 'session' or 'run', got {scope!r}")
    if scope == "run" and not allow_run_scope:
        raise HistorySearchError("scope 'run' is not allowed for this worker's role; use 'session'")
    if before_seq is not None and before_seq < 1:
        raise HistorySearchError(f"before_seq must be a positive sequence number, got {before_seq}")
    if scope == "run" and before_seq is not None:
        raise HistorySearchError("before_seq pages the caller's own session; use scope 'session'")
    kinds = set(EVENT_KINDS) if include_tool_events else set(EVENT_KINDS) - TOOL_EVENT_KINDS
    caller = backend.get_worker(caller_worker_id)
    events = backend.search_events(
        worker_id=caller.id if scope == "session" else None,
        run_id=caller.run_id if scope == "run" else None,
        workers_of_run=_same_repository(backend, caller) if scope == "run" else None,
        query=query,
        kinds=kinds,
        before_seq=before_seq,
        limit=limit,
    )
    return [
        HistoryHit(
            citation=f"worker:{e.worker_id}#{e.seq}",
            worker_id=e.worker_id,
            seq=e.seq,
            kind=e.kind,
            created_at=e.created_at,
            excerpt=_excerpt(e, query),
        )
        for e in events
    ]


def _same_repository(backend: HistoryBackend, caller: WorkerRow) -> set[str]:
    """The workers of the caller's run that worked on the caller's repository as the caller's
    identity (its installation): the only sessions a run-wide search may read."""
    repo, login = caller.task.get("repo"), caller.identity_login
    return {
        w.id
        for w in backend.list_workers(run_id=caller.run_id)
        if w.task.get("repo") == repo and w.identity_login == login
    }


def format_hits(hits: list[HistoryHit]) -> str:
    """Tool-result text for the model: one cited line per hit, plus how to page on."""
    if not hits:
        return "No matching history."
    lines = [f"[{h.citation}] {h.kind}: {h.excerpt}" for h in hits]
    oldest = min(h.seq for h in hits)
    lines.append(f"(older results: call again with before_seq={oldest})")
    return "\n".join(lines)
