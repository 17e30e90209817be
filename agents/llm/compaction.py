"""Keeping a session's history under its context budget by stubbing older tool results.

A stub says what was read and how to read it again (the same tool, the same arguments), so the
model loses no way back to the data, only the copy. Stubs are sticky: once a result is stubbed it
stays stubbed in every later request, so the history up to the last stubbed message (the
``boundary``, where a cache breakpoint goes) is byte-identical from then on and is read from the
cache. Compaction stubs whole turns, oldest first, from the high-water mark down to the
low-water mark in one step, so the cached history moves rarely. The newest turns are never
stubbed: they hold what the model is working on.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from agents.json_value import JSONObject, JSONValue
from agents.llm.context import ContextBudget, ContextFull

STUB_PREFIX: Final = "[stubbed earlier result"
# An older turn's ``<turn_context>`` (budgets, time, task) is stale once newer ones follow.
CONTEXT_STUB: Final = "[older turn context omitted]"
# Turns (user messages with tool results) at the end of the history that stay whole.
KEEP_RECENT: Final = 2


def _chars(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def stub_text(name: str, args: Mapping[str, object], chars: int) -> str:
    call = json.dumps(dict(args), sort_keys=True, ensure_ascii=False)
    return (
        f"{STUB_PREFIX}: {name} {call} returned {chars:,} characters, taken out to fit the "
        f"context window. Call {name} again with the same arguments to read it again.]"
    )


@dataclass
class Stubs:
    """The session's stubbed tool results (by tool_use id) and the last message they reach."""

    replaced: dict[str, str] = field(default_factory=dict)
    boundary: int | None = None
    compactions: int = 0
    # Indexes of user messages whose turn context is omitted (those of stubbed turns).
    contexts: set[int] = field(default_factory=set)

    def apply(self, messages: Sequence[Mapping[str, JSONValue]]) -> list[JSONObject]:
        """The history as it is sent: stubbed results replaced, everything else as it was."""
        return [self._render(i, m) for i, m in enumerate(messages)]

    def _render(self, index: int, message: Mapping[str, JSONValue]) -> JSONObject:
        content = message.get("content")
        if not self.replaced or not isinstance(content, list):
            return dict(message)
        blocks: list[JSONValue] = []
        for block in content:
            if isinstance(block, dict):
                use_id = str(block.get("tool_use_id"))
                stub = self.replaced.get(use_id) if _is_result(block) else None
                if stub is not None:
                    block = {**block, "content": stub}
                elif index in self.contexts and _is_turn_context(block):
                    block = {**block, "text": CONTEXT_STUB}
            blocks.append(block)
        return {**message, "content": blocks}


def _is_turn_context(block: object) -> bool:
    return (
        isinstance(block, Mapping)
        and block.get("type") == "text"
        and str(block.get("text", "")).startswith("<turn_context>")
    )


def _is_result(block: object) -> bool:
    return isinstance(block, Mapping) and block.get("type") == "tool_result"


def _calls(
    messages: Sequence[Mapping[str, JSONValue]],
) -> dict[str, tuple[str, Mapping[str, JSONValue]]]:
    found: dict[str, tuple[str, Mapping[str, JSONValue]]] = {}
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                args = block.get("input")
                found[str(block.get("id"))] = (
                    str(block.get("name")),
                    args if isinstance(args, dict) else {},
                )
    return found


def history_tokens(messages: Sequence[Mapping[str, JSONValue]], chars_per_token: float) -> int:
    return math.ceil(sum(_chars(m) for m in messages) / chars_per_token)


def compact(
    messages: Sequence[Mapping[str, JSONValue]],
    stubs: Stubs,
    *,
    fixed_tokens: int,
    chars_per_token: float,
    budget: ContextBudget,
    keep_recent: int = KEEP_RECENT,
) -> Stubs:
    """``stubs`` extended so the request fits the budget (unchanged while under high water).

    ``fixed_tokens`` is the request's part outside the history (tools, system, overlays).
    Raises :class:`ContextFull` when even stubbing every older turn leaves it over the limit.
    """

    def total(current: Stubs) -> int:
        return fixed_tokens + history_tokens(current.apply(messages), chars_per_token)

    if total(stubs) <= budget.high_water:
        return stubs
    turns = [i for i, m in enumerate(messages) if any(map(_is_result, _blocks(m)))]
    eligible = turns[:-keep_recent] if keep_recent else turns
    calls = _calls(messages)
    out = Stubs(dict(stubs.replaced), stubs.boundary, stubs.compactions + 1, set(stubs.contexts))
    size = total(out)
    for index in eligible:
        if size <= budget.low_water:
            break
        for block in _blocks(messages[index]):
            use_id = str(block.get("tool_use_id"))
            if not _is_result(block) or use_id in out.replaced:
                continue
            name, args = calls.get(use_id, ("the tool", {}))
            out.replaced[use_id] = stub_text(name, args, len(str(block.get("content", ""))))
        out.contexts.add(index)
        out.boundary = max(index, out.boundary or 0)
        size = total(out)
    if size > budget.limit:
        raise ContextFull(
            f"the conversation needs about {size} input tokens with every older tool result "
            f"stubbed, over the {budget.limit}-token budget of a {budget.window}-token window"
        )
    return out


def _blocks(message: Mapping[str, JSONValue]) -> list[JSONObject]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
