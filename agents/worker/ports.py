"""What the worker loop talks to, as three small ports: the model, the tools, the recorder.

The real ones are the Anthropic client (``agents.llm.client.LLMClient``), the role's toolbox
(``agents.tools.Toolbox``) and the store (``agents.worker.record.StoreRecorder``); the loop's
unit tests plug in-memory ones into the same holes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from agents.json_value import JSONObject, JSONValue
from agents.llm.turn import ToolResult

if TYPE_CHECKING:
    from agents.llm.client import LLMResult


class Model(Protocol):
    """One call to the model: ``messages.create`` keyword arguments in, its reply out."""

    async def create(self, request: Mapping[str, object]) -> LLMResult: ...


class Tools(Protocol):
    """The tools offered to the model. A bad call is an error result, never an exception."""

    async def call(self, name: str, raw_args: object) -> ToolResult: ...


@dataclass(frozen=True)
class ModelTurn:
    """One model call as the record keeps it."""

    result: LLMResult
    model: str
    prefix_hash: str
    role_chain: list[str]
    cost_usd: float
    cache_miss: bool
    memory_hash: str | None = None
    # The call's tokens as billed (what the token budget counts), beside the raw usage.
    billed_tokens: int = 0


@dataclass(frozen=True)
class ToolUse:
    """One tool call the model asked for."""

    id: str
    name: str
    args: JSONObject

    @classmethod
    def from_block(cls, block: Mapping[str, JSONValue]) -> ToolUse:
        # The API's ``input`` is always a JSON object; anything else is no arguments.
        found = block.get("input")
        args = found if isinstance(found, dict) else {}
        return cls(str(block.get("id")), str(block.get("name")), args)


class Recorder(Protocol):
    """Where a session's turns go: the transcript, the LLM call log."""

    def user_turn(self, message: Mapping[str, object]) -> None: ...

    def model_turn(self, turn: ModelTurn) -> None: ...

    def tool_call(self, use: ToolUse) -> None: ...

    def tool_result(self, use: ToolUse, result: ToolResult) -> None: ...
