"""What the model may call. A worker gets only the tools its role lists and its token allows."""

from __future__ import annotations

from collections.abc import Sequence

from agents.llm.turn import ToolResult
from agents.roles import KNOWN_TOOLS
from agents.tools.base import OfferedTool, Tool, Toolbox, ToolError
from agents.tools.context import WorkerContext
from agents.tools.github_tools import github_tools
from agents.tools.memory_tools import memory_tools

# The tools a role may list (and the permissions each needs) are declared in agents.roles.
ALL_TOOL_NAMES = tuple(sorted(KNOWN_TOOLS))


def build_toolbox(ctx: WorkerContext, allowed: Sequence[str]) -> Toolbox:
    """The role's tools, minus any write tool whose permission the role chain does not grant."""
    wanted = set(allowed)
    unknown = wanted - set(ALL_TOOL_NAMES)
    if unknown:
        raise ValueError(f"unknown tool(s) {sorted(unknown)}; known: {', '.join(ALL_TOOL_NAMES)}")
    chosen: list[OfferedTool] = []
    for tool in [*github_tools(ctx), *memory_tools(ctx)]:
        if tool.name not in wanted:
            continue
        if tool.needs_permission is not None and not ctx.may(*tool.needs_permission):
            continue
        chosen.append(tool)
    return Toolbox(chosen)


__all__ = [
    "ALL_TOOL_NAMES",
    "OfferedTool",
    "Tool",
    "ToolError",
    "ToolResult",
    "Toolbox",
    "WorkerContext",
    "build_toolbox",
]
