"""What the model may call. A worker gets only the tools its role lists and its token allows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents.tools.base import Tool, Toolbox, ToolError, ToolResult
from agents.tools.context import WorkerContext
from agents.tools.github_tools import github_tools
from agents.tools.memory_tools import memory_tools

ALL_TOOL_NAMES = (
    "add_labels",
    "comment_issue",
    "get_issue",
    "get_pull",
    "history_search",
    "list_pull_files",
    "memory_note",
    "memory_search",
    "read_file",
    "record_progress",
    "submit_review",
)


def build_toolbox(ctx: WorkerContext, allowed: Sequence[str]) -> Toolbox:
    """The role's tools, minus any write tool whose permission the role chain does not grant."""
    wanted = set(allowed)
    unknown = wanted - set(ALL_TOOL_NAMES)
    if unknown:
        raise ValueError(f"unknown tool(s) {sorted(unknown)}; known: {', '.join(ALL_TOOL_NAMES)}")
    chosen: list[Tool[Any]] = []
    for tool in [*github_tools(ctx), *memory_tools(ctx)]:
        if tool.name not in wanted:
            continue
        if tool.needs_permission is not None and not ctx.may(*tool.needs_permission):
            continue
        chosen.append(tool)
    return Toolbox(chosen)


__all__ = [
    "ALL_TOOL_NAMES",
    "Tool",
    "ToolError",
    "ToolResult",
    "Toolbox",
    "WorkerContext",
    "build_toolbox",
]
