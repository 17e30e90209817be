"""Read-back as text for the CLI (``swarm transcript``): one line per event, tools compact."""

from __future__ import annotations

import json
from typing import Protocol

from agents.store.records import EventRecord

PREVIEW_CHARS = 160


class TranscriptSource(Protocol):
    def get_transcript(
        self, worker_id: str, *, after_seq: int = 0, limit: int | None = None
    ) -> list[EventRecord]: ...


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _payload_text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def summarise_tool_event(event: EventRecord, preview_chars: int = 80) -> str:
    """``name status size "preview"`` for a tool call or result, never the full payload."""
    c = event.content
    name = str(c.get("name") or c.get("tool") or "tool")
    status = str(c.get("status") or ("error" if c.get("is_error") else "ok"))
    payload = c.get("output", c.get("input", c.get("text", c)))
    body = _payload_text(payload)
    return f'{name} {status} {len(body)}B "{_one_line(body, preview_chars)}"'


def describe_event(event: EventRecord, *, compact_tools: bool = True) -> str:
    c = event.content
    if event.kind in ("tool_call", "tool_result") and compact_tools:
        detail = summarise_tool_event(event)
    elif "text" in c and isinstance(c["text"], str):
        detail = c["text"] if not compact_tools else _one_line(c["text"], 2_000)
    else:
        detail = _payload_text(c)
    return detail


def _tokens(event: EventRecord) -> str:
    """A model call's tokens: raw, and billed (what its budget counts) where recorded."""
    usage = event.content.get("usage")
    billed = usage.get("billed_tokens") if isinstance(usage, dict) else None
    if isinstance(billed, int):
        return f"{event.tokens} tok raw, {billed} billed"
    return f"{event.tokens} tok"


def render_transcript(store: TranscriptSource, worker_id: str, compact_tools: bool = True) -> str:
    lines = []
    for ev in store.get_transcript(worker_id):
        stamp = ev.created_at.strftime("%H:%M:%S")
        extra = f" ({_tokens(ev)}, ${ev.cost:.4f})" if ev.tokens or ev.cost else ""
        body = describe_event(ev, compact_tools=compact_tools)
        lines.append(f"#{ev.seq:<4} {stamp} {ev.kind:<14} {body}{extra}")
    if not lines:
        return f"(no events recorded for worker {worker_id})"
    return "\n".join(lines)
