"""The tool contract: a name, a pydantic argument model, a handler, and what it needs to run.

Tools are offered to the model in a stable, name-sorted order so the tool block (the first part
of the cached prefix) is byte-identical on every call of a session.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from agents.github.errors import GitHubApiError, TokenRefused, UnsafePath
from agents.github.writes import WriteRefused
from agents.llm.turn import ToolResult
from agents.llm.untrusted import neutralise
from agents.posting.once import PostingRefused
from agents.redact import redact
from agents.tools.catalog import TOOLS
from agents.transport import GitHubUnreachable

ArgsT = TypeVar("ArgsT", bound=BaseModel)


class ToolError(Exception):
    """A tool call the model made could not be carried out; the text goes back to the model."""


# GitHub refusing our own identity is not the model's to fix: 401 (the token is bad or revoked)
# and 403 (the identity lacks a permission; rate-limit 403s become pauses before this).
_IDENTITY_FAILURES = frozenset({401, 403})
REASON_CHARS = 300


def ends_the_worker(exc: Exception) -> bool:
    """Whether a GitHub error inside a tool ends the worker instead of going back to the model.

    Only our own identity's failures do; a missing file, a comment GitHub cannot place, a
    conflict or a GitHub outage is an error result the model reads and works around.
    """
    if isinstance(exc, TokenRefused):
        return True
    return isinstance(exc, GitHubApiError) and exc.status in _IDENTITY_FAILURES


def github_reason(exc: Exception) -> str:
    """A short, one-line reason for the model; GitHub's message is data, so it is neutralised."""
    if isinstance(exc, WriteRefused):
        text = str(exc)  # our own cap, not GitHub's answer
    elif isinstance(exc, GitHubApiError):
        text = f"GitHub answered {exc.status} for {exc.method} {exc.route}: {exc.message}"
    else:
        text = str(exc)
    line = " ".join(neutralise(redact(text)).split())
    return line if len(line) <= REASON_CHARS else line[: REASON_CHARS - 3] + "..."


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

    @property
    def needs_permission(self) -> tuple[str, str] | None:
        """The GitHub write the tool needs to act, e.g. ("pull_requests", "write"), from its
        one declaration (:mod:`agents.tools.catalog`); None for reads."""
        spec = TOOLS.get(self.name)
        return spec.writes if spec is not None else None

    def schema(self) -> dict[str, Any]:
        params = json.loads(_input_schema(self.args))  # a fresh copy: callers may change it
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
        except (ToolError, PostingRefused) as exc:
            # A write posting refused (another worker is posting it, no number) is the model's
            # to read, as a tool's own refusal is.
            return ToolResult(f"{self.name} failed: {exc}", is_error=True, summary=str(exc))
        except (GitHubApiError, GitHubUnreachable, TokenRefused, UnsafePath) as exc:
            if ends_the_worker(exc):
                raise
            reason = github_reason(exc)
            return ToolResult(f"{self.name} failed: {reason}", is_error=True, summary=reason)


@functools.cache
def _input_schema(args: type[BaseModel]) -> str:
    """An argument model's JSON schema, generated once per process: pydantic builds it anew on
    every call, and every worker offers the same tools."""
    params = args.model_json_schema()
    params.pop("title", None)
    return json.dumps(params)


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
