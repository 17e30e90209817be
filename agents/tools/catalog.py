"""Every tool the model may be offered, declared once: its name, the permissions a role must
grant to list it, the write that offers it, how a worker's story names a call of it, and whether
its result is our own words.

The role loader (:mod:`agents.roles.files`), the toolbox (:class:`agents.tools.base.Tool`'s
``needs_permission``) and the worker's story (:mod:`agents.worker.story`) read this table; a
shipped tool is one row here plus its handler. A tool from elsewhere (a test, a plugin module)
registers its row at import (:func:`register`, through :func:`agents.tools.register_tool`) and
every reader sees it: they ask :data:`TOOLS` when they run, never a copy taken at import. Plain
data: it imports nothing of ours.
"""

from __future__ import annotations

from collections.abc import KeysView, Mapping
from dataclasses import dataclass, field
from typing import Final


@dataclass(frozen=True)
class ToolSpec:
    """One tool. ``needs``: what a role listing it must grant (checked when the role is read);
    ``writes``: the write permission without which the toolbox never offers it (None: a read);
    ``verb``: the story's words for a read of it; ``own_text``: its result is our own words (a
    posting, a note), safe to show in the log, never the PR author's."""

    name: str
    needs: Mapping[str, str] = field(default_factory=dict)
    writes: tuple[str, str] | None = None
    verb: str | None = None
    own_text: bool = False


_PR_WRITE = ("pull_requests", "write")
_ISSUE_WRITE = ("issues", "write")
_CONTENTS_WRITE = ("contents", "write")

CATALOG: Final[tuple[ToolSpec, ...]] = (
    ToolSpec("get_pull", {"pull_requests": "read"}, verb="read the pull request"),
    ToolSpec("list_pull_files", {"pull_requests": "read"}, verb="read the changed files"),
    ToolSpec("read_file", {"contents": "read"}, verb="read file"),
    ToolSpec("get_issue", {"issues": "read"}, verb="read the issue"),
    ToolSpec("memory_search"),
    ToolSpec("history_search"),
    ToolSpec("memory_note", own_text=True),
    ToolSpec("record_progress"),
    ToolSpec("submit_review", {"pull_requests": "write"}, _PR_WRITE, own_text=True),
    ToolSpec("comment_issue", {"issues": "write"}, _ISSUE_WRITE, own_text=True),
    ToolSpec("add_labels", {"issues": "write"}, _ISSUE_WRITE, own_text=True),
    ToolSpec("get_thread", {"pull_requests": "read", "contents": "read"}),
    ToolSpec("reply_in_thread", {"pull_requests": "write"}, _PR_WRITE),
    # The writer's working copy (agents/tools/workspace_tools.py): its edits become a commit.
    ToolSpec("workspace_read", {"contents": "read"}),
    ToolSpec("workspace_list", {"contents": "read"}),
    ToolSpec("workspace_search", {"contents": "read"}),
    ToolSpec("workspace_write", {"contents": "write"}, _CONTENTS_WRITE),
    ToolSpec("workspace_edit", {"contents": "write"}, _CONTENTS_WRITE),
    ToolSpec("workspace_delete", {"contents": "write"}, _CONTENTS_WRITE),
    # The writer's tests and its one draft pull request (agents/tools/writer_tools.py).
    ToolSpec("run_tests", {"contents": "read"}, verb="ran the tests"),
    ToolSpec(
        "open_pull_request",
        {"contents": "write", "pull_requests": "write"},
        _PR_WRITE,
        own_text=True,
    ),
    # Plan approval: a planning session's one tool; it writes nothing (the flow posts the plan).
    ToolSpec("propose_plan", {"contents": "read"}, own_text=True),
    # A fix round on the writer's own pull request (agents/tools/fix_tools.py).
    ToolSpec("get_findings", {"pull_requests": "read"}, verb="read the blocking findings"),
    ToolSpec(
        "push_fix",
        {"contents": "write", "pull_requests": "write"},
        _PR_WRITE,
        own_text=True,
    ),
)
# The live table: the shipped rows, then whatever registered since. A dict, not a frozen copy,
# so a registered tool is known to the role loader, the toolbox and the story at once.
TOOLS: Final[dict[str, ToolSpec]] = {spec.name: spec for spec in CATALOG}
# Every tool name, as a live view of the table. A role naming a tool that is not here, or one
# whose ``needs`` its permissions do not grant, is refused at load time rather than failing
# mid-review.
KNOWN_TOOLS: Final[KeysView[str]] = TOOLS.keys()


def register(spec: ToolSpec) -> None:
    """Add a tool's row. A name already taken is refused: a second row would silently change
    what the first tool needs or how the story names it."""
    if spec.name in TOOLS:
        raise ValueError(f"tool {spec.name!r} is already declared")
    TOOLS[spec.name] = spec


def unregister(name: str) -> None:
    """Take a registered tool's row out again (a test's tool, once the test is over). A shipped
    tool stays: the roles on disk name them."""
    if any(spec.name == name for spec in CATALOG):
        raise ValueError(f"tool {name!r} is shipped and cannot be unregistered")
    TOOLS.pop(name, None)
