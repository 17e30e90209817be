"""What the model may call. A worker gets only the tools its role lists and its token allows.

- ``base.py``: The tool contract: a name, a pydantic argument model, a handler, and what it needs to
  run
- ``catalog.py``: Every tool declared once: name, permissions, the write that offers it, its story
  verb, whether its result is our own words
- ``context.py``: What every tool of one worker shares: its task, its gateway, the store, its
  buffers
- ``github_tools.py``: GitHub tools: read the task's pull request or issue, and the few writes a
  role may make
- ``memory_tools.py``: Memory and history tools: recall, the bounded history search, notes, progress
  checkpoints
- ``pages.py``: Paging tool output to the session's tier: long patches, files and listings in pages
  that name the next call, never cut
- ``pull_files.py``: The pull request's files as the tools see them: the reviewed set, the whole
  PR's patches comments anchor to, and the view of the PR the review's writer is handed
- ``replies.py``: The responder's tools: read the bot's thread a person replied in, and answer in
  it once
- ``writer_tools.py``: The writer's tests (the base branch's command, in the sandbox) and its one
  draft pull request, committed and opened by code
- ``fix_tools.py``: A fix round's tools: the blocking findings, and one commit pushed with an
  answer in each finding's thread (never resolving it)
- ``workspace_tools.py``: The writer's tools on its working copy: read, list, search, write, edit
  and delete files, each refusal an error result the model reads
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agents.llm.turn import ToolResult
from agents.tools.base import OfferedTool, Tool, Toolbox, ToolError
from agents.tools.catalog import TOOLS, ToolSpec, register, unregister
from agents.tools.context import WorkerContext
from agents.tools.fix_tools import fix_tools
from agents.tools.github_tools import github_tools
from agents.tools.memory_tools import memory_tools
from agents.tools.replies import reply_tools
from agents.tools.workspace_tools import workspace_tools
from agents.tools.writer_tools import writer_tools

# What a writer's planning session (plan approval) may call of its role's tools: reads, and
# propose_plan (offered only to a planning session).
PLANNING_TOOLS = frozenset(
    {
        "get_issue",
        "workspace_list",
        "workspace_search",
        "workspace_read",
        "memory_search",
        "propose_plan",
    }
)
# What offers a registered tool to one worker: its handler bound to the worker's context, or
# nothing where the worker lacks what the tool works on.
Offer = Callable[[WorkerContext], Sequence[OfferedTool]]
_REGISTERED: dict[str, Offer] = {}


def tool_names() -> tuple[str, ...]:
    """Every tool a role may list, sorted: the shipped ones and the registered ones."""
    return tuple(sorted(TOOLS))


def register_tool(spec: ToolSpec, offer: Offer) -> None:
    """Declare a tool from outside this package in one call: its row (what a role listing it
    must grant, the write that offers it, how the story names it) and its handler. From then on
    a role file may list it, the toolbox offers it to the roles that do, and the story tells its
    calls, like a shipped tool's."""
    register(spec)
    _REGISTERED[spec.name] = offer


def unregister_tool(name: str) -> None:
    """Take a registered tool out again; its name is unknown to the next role loaded."""
    _REGISTERED.pop(name, None)
    unregister(name)


def build_toolbox(ctx: WorkerContext, allowed: Sequence[str]) -> Toolbox:
    """The role's tools, minus any write tool whose permission the role chain does not grant."""
    wanted = set(allowed)
    unknown = wanted - set(TOOLS)
    if unknown:
        raise ValueError(f"unknown tool(s) {sorted(unknown)}; known: {', '.join(tool_names())}")
    if ctx.bench is not None and ctx.bench.planning:
        # A planning session reads and proposes: none of the role's writes is offered.
        wanted &= PLANNING_TOOLS
    chosen: list[OfferedTool] = []
    copy_tools = workspace_tools(ctx.workspace) if ctx.workspace is not None else []
    if ctx.bench is not None:
        copy_tools += writer_tools(ctx, ctx.bench)
        if ctx.bench.fixing is not None:
            copy_tools += fix_tools(ctx, ctx.bench, ctx.bench.fixing)
    registered = [
        tool for name, offer in _REGISTERED.items() if name in wanted for tool in offer(ctx)
    ]
    for tool in [
        *github_tools(ctx),
        *memory_tools(ctx),
        *reply_tools(ctx),
        *copy_tools,
        *registered,
    ]:
        if tool.name not in wanted:
            continue
        if tool.needs_permission is not None and not ctx.may(*tool.needs_permission):
            continue
        chosen.append(tool)
    return Toolbox(chosen)


__all__ = [
    "OfferedTool",
    "Tool",
    "ToolError",
    "ToolResult",
    "ToolSpec",
    "Toolbox",
    "WorkerContext",
    "build_toolbox",
    "register_tool",
    "tool_names",
    "unregister_tool",
]
