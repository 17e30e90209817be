"""The tool contract: a name, a pydantic argument model, a handler, and what it needs to run.

Tools are offered to the model in a stable, name-sorted order so the tool block (the first part
of the cached prefix) is byte-identical on every call of a session.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from agents.llm.turn import ToolResult

ArgsT = TypeVar("ArgsT", bound=BaseModel)


class ToolError(Exception):
    """A tool call the model made could not be carried out; the text goes back to the model."""


class OfferedTool(Protocol):
    """A tool as the toolbox and the model see it, whatever its argument model."""

    @property
    def name(self) -> str: ...

    @property
    def needs_permission(self) -> tuple[str, str] | None: ...

    def schema(self) -> dict[str, Any]: ...

    async def call(self, raw_args: object) -> ToolResult: ...


@dataclass(frozen=True)
class Tool(Generic[ArgsT]):
    name: str
    description: str
    args: type[ArgsT]
    handler: Callable[[ArgsT], Awaitable[ToolResult]]
    # GitHub permission the tool needs to act, e.g. ("pull_requests", "write"); None for reads.
    needs_permission: tuple[str, str] | None = None

    def schema(self) -> dict[str, Any]:
        params = self.args.model_json_schema()
        params.pop("title", None)
        return {"name": self.name, "description": self.description, "input_schema": params}

    async def call(self, raw_args: object) -> ToolResult:
        try:
            parsed = self.args.model_validate(raw_args)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                for e in exc.errors(include_input=False, include_url=False)
            )
            return ToolResult(f"invalid arguments for {self.name}: {problems}", is_error=True)
        try:
            return await self.handler(parsed)
        except ToolError as exc:
            return ToolResult(f"{self.name} failed: {exc}", is_error=True, summary=str(exc))


class Toolbox:
    """The tools one worker may use, checked against its role and permissions once at start."""

    def __init__(self, tools: Iterable[OfferedTool]) -> None:
        self._tools = {t.name: t for t in sorted(tools, key=lambda t: t.name)}

    def schemas(self) -> list[dict[str, Any]]:
        return [t.schema() for t in self._tools.values()]

    async def call(self, name: str, raw_args: object) -> ToolResult:
        tool = self._tools.get(name)
        if tool is None:
            offered = ", ".join(self._tools)
            return ToolResult(
                f"tool {name!r} is not available to this worker (available: {offered})",
                is_error=True,
            )
        return await tool.call(raw_args)
