"""Every tool the model may be offered, declared once: its name, the permissions a role must
grant to list it, the write that offers it, how a worker's story names a call of it, and whether
its result is our own words.

The role loader (:mod:`agents.roles.files`), the toolbox (:class:`agents.tools.base.Tool`'s
``needs_permission``) and the worker's story (:mod:`agents.worker.story`) read this table; a
new tool is one row here plus its handler. Plain data: it imports nothing of ours.
"""

from __future__ import annotations

from collections.abc import Mapping
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
TOOLS: Final[Mapping[str, ToolSpec]] = {spec.name: spec for spec in CATALOG}
# Tools the worker offers, and the permission each needs. A role naming a tool it cannot use is
# refused at load time rather than failing mid-review.
TOOL_PERMISSIONS: Final[Mapping[str, Mapping[str, str]]] = {s.name: s.needs for s in CATALOG}
KNOWN_TOOLS: Final[frozenset[str]] = frozenset(TOOLS)
READ_VERBS: Final[Mapping[str, str]] = {s.name: s.verb for s in CATALOG if s.verb}
OWN_TEXT_TOOLS: Final[frozenset[str]] = frozenset(s.name for s in CATALOG if s.own_text)
