"""What a transcript event can be. Shared vocabulary, like ``agents.redact``: the store (which
records events) and memory (which searches them) both import it, never each other."""

from __future__ import annotations

from typing import Literal, get_args

EventKind = Literal[
    "user_turn",
    "assistant_turn",
    "tool_call",
    "tool_result",
    "status",
    "compaction",
    "error",
    "progress",
]
EVENT_KINDS: tuple[str, ...] = get_args(EventKind)
TOOL_EVENT_KINDS = frozenset({"tool_call", "tool_result"})
