"""In-memory stand-ins for the loop's three ports: a model that replays replies, tools that
answer from a dict, a recorder that keeps what it was told. No HTTP, no store."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agents.llm.client import LLMResult
from agents.llm.turn import ToolResult
from agents.llm.usage import Usage
from agents.worker.ports import ModelTurn, ToolUse

MODEL = "claude-sonnet-4-6"


def reply(*blocks: dict[str, Any], stop: str = "tool_use", usage: Usage | None = None) -> LLMResult:
    return LLMResult(
        content=list(blocks),
        stop_reason=stop,
        usage=usage or Usage(input_tokens=100, output_tokens=20),
        model=MODEL,
        latency_s=0.01,
    )


def text(words: str, stop: str = "end_turn") -> LLMResult:
    return reply({"type": "text", "text": words}, stop=stop)


def use(name: str, n: int = 1, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": args}


class ReplayModel:
    """The ``Model`` port: the next reply for each request, and every request it saw."""

    def __init__(self, *replies: LLMResult) -> None:
        self.replies = list(replies)
        self.requests: list[Mapping[str, Any]] = []

    async def create(self, request: Mapping[str, Any]) -> LLMResult:
        self.requests.append(json.loads(json.dumps(request)))
        return self.replies.pop(0) if self.replies else text("done")


Handler = Callable[[Mapping[str, Any]], Awaitable[ToolResult]]


@dataclass
class DictTools:
    """The ``Tools`` port: one handler per tool name; unknown names are error results."""

    handlers: dict[str, Handler] = field(default_factory=dict)
    calls: list[tuple[str, Any]] = field(default_factory=list)

    async def call(self, name: str, raw_args: Any) -> ToolResult:
        self.calls.append((name, raw_args))
        handler = self.handlers.get(name)
        if handler is None:
            return ToolResult(f"tool {name!r} is not available", is_error=True)
        return await handler(raw_args)


@dataclass
class ListRecorder:
    """The ``Recorder`` port: every record, in order, as (kind, what)."""

    events: list[tuple[str, Any]] = field(default_factory=list)

    def user_turn(self, message: Mapping[str, Any]) -> None:
        self.events.append(("user", message))

    def model_turn(self, turn: ModelTurn) -> None:
        self.events.append(("model", turn))

    def tool_call(self, use: ToolUse) -> None:
        self.events.append(("tool_call", use))

    def tool_result(self, use: ToolUse, result: ToolResult) -> None:
        self.events.append(("tool_result", (use, result)))

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.events]

    def model_turns(self) -> list[ModelTurn]:
        return [turn for kind, turn in self.events if kind == "model"]
