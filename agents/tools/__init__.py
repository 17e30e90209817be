"""What the model may call. A worker gets only the tools its role lists and its token allows.

- ``anchors.py``: Where an inline review comment can sit: the lines of the PR's diff hunks; the rest
  moves into the review body
- ``base.py``: The tool contract: a name, a pydantic argument model, a handler, and what it needs to
  run
- ``catalog.py``: Every tool declared once: name, permissions, the write that offers it, its story
  verb, whether its result is our own words
- ``comment.py``: Posting the triager's single comment on an issue exactly once, whichever worker
  posts it (store claim per issue and role, hidden marker)
- ``context.py``: What every tool of one worker shares: its task, its gateway, the store, its
  buffers
- ``github_tools.py``: GitHub tools: read the task's pull request or issue, and the few writes a
  role may make
- ``memory_tools.py``: Memory and history tools: recall, the bounded history search, notes, progress
  checkpoints
- ``pages.py``: Paging tool output to the session's tier: long patches, files and listings in pages
  that name the next call, never cut
- ``publish.py``: A review as the product posts it, from the findings the model reported as data:
  selection, summary, review, resolved threads
- ``pull_files.py``: The pull request's files as the tools see them: the reviewed set and the whole
  PR's patches comments anchor to
- ``replies.py``: The responder's tools: read the bot's thread a person replied in, and answer in
  it once
- ``review.py``: Posting exactly one review per (PR, head SHA, role), even across retries, re-runs
  and crashes
- ``summary.py``: The bot's one summary comment on a pull request: created once, then edited in
  place
- ``threads.py``: The bot's earlier findings on a pull request, their threads, and closing the fixed
  ones
- ``writer_tools.py``: The writer's tests (the base branch's command, in the sandbox) and its one
  draft pull request, committed and opened by code
- ``fix_tools.py``: A fix round's tools: the blocking findings, and one commit pushed with an
  answer in each finding's thread (never resolving it)
- ``workspace_tools.py``: The writer's tools on its working copy: read, list, search, write, edit
  and delete files, each refusal an error result the model reads
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.llm.turn import ToolResult
from agents.tools.base import OfferedTool, Tool, Toolbox, ToolError
from agents.tools.catalog import KNOWN_TOOLS
from agents.tools.context import WorkerContext
from agents.tools.fix_tools import fix_tools
from agents.tools.github_tools import github_tools
from agents.tools.memory_tools import memory_tools
from agents.tools.replies import reply_tools
from agents.tools.workspace_tools import workspace_tools
from agents.tools.writer_tools import writer_tools

# The tools a role may list (and the permissions each needs) are declared in agents.roles.
ALL_TOOL_NAMES = tuple(sorted(KNOWN_TOOLS))
# What a writer's planning session (plan approval) may call besides propose_plan.
PLANNING_READS = frozenset(
    {"get_issue", "workspace_list", "workspace_search", "workspace_read", "memory_search"}
)


def build_toolbox(ctx: WorkerContext, allowed: Sequence[str]) -> Toolbox:
    """The role's tools, minus any write tool whose permission the role chain does not grant."""
    wanted = set(allowed)
    unknown = wanted - set(ALL_TOOL_NAMES)
    if unknown:
        raise ValueError(f"unknown tool(s) {sorted(unknown)}; known: {', '.join(ALL_TOOL_NAMES)}")
    if ctx.bench is not None and ctx.bench.planning:
        # A planning session reads and proposes: none of the role's writes is offered.
        wanted = (wanted & PLANNING_READS) | {"propose_plan"}
    chosen: list[OfferedTool] = []
    copy_tools = workspace_tools(ctx.workspace) if ctx.workspace is not None else []
    if ctx.bench is not None:
        copy_tools += writer_tools(ctx, ctx.bench)
        if ctx.bench.fixing is not None:
            copy_tools += fix_tools(ctx, ctx.bench, ctx.bench.fixing)
    for tool in [*github_tools(ctx), *memory_tools(ctx), *reply_tools(ctx), *copy_tools]:
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
