"""Scaffolding for exercising the LLM layer against the scripted model.

``FakeRepo`` plays GitHub from an in-memory pull request as the worker loop's ``Tools`` port, and
``run_scripted`` drives the real loop (``agents.worker.loop``) with it, so that prompt assembly,
the real SDK and the fake provider meet without a store or an HTTP GitHub.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from agents.dispatch.envelope import Budgets
from agents.llm.client import LLMClient
from agents.llm.prompt import CachedPrefix, PrefixBuilder
from agents.llm.request import OverlayChain
from agents.llm.turn import ToolResult
from agents.llm.untrusted import wrap_untrusted
from agents.roles import Role
from agents.worker.budget import Meter
from agents.worker.loop import Session, run_session
from agents.worker.ports import ModelTurn
from tests.worker.memory_ports import ListRecorder

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def _tool(description: str, **props: dict[str, Any]) -> dict[str, Any]:
    """A tool's description and its input schema: an object of ``props``, each required."""
    schema = {"type": "object", "properties": props, "required": sorted(props)}
    return {"description": description, "input_schema": schema}


S = {"type": "string"}
N = {"type": "integer"}
TOOL_SPECS: dict[str, dict[str, Any]] = {
    "get_pull": _tool(
        "Read a pull request's metadata: title, body, author, base and head.", repo=S, number=N
    ),
    "list_pull_files": _tool(
        "List the changed files of a pull request with their patches, paged.",
        repo=S,
        number=N,
        page=N,
    ),
    "read_file": _tool(
        "Read one file of the repository at a commit (the PR head by default).",
        repo=S,
        path=S,
        ref=S,
    ),
    "memory_search": _tool("Search your memory (facts and procedures) for a query.", query=S),
    "history_search": _tool("Search earlier sessions' history (redacted) for a query.", query=S),
    "memory_note": _tool("Record a memory note for later sessions.", text=S),
    "record_progress": _tool("Record a goal checkpoint or decision, shown in the UI.", note=S),
    "submit_review": _tool(
        "Submit one pull request review with inline comments (event COMMENT).",
        repo=S,
        number=N,
        event=S,
        body=S,
        comments={"type": "array", "items": {}},
    ),
    "comment_issue": _tool("Post one comment on an issue.", repo=S, number=N, body=S),
    "add_labels": _tool(
        "Add labels to an issue.", repo=S, number=N, labels={"type": "array", "items": S}
    ),
    "get_issue": _tool("Read an issue: title, body, labels, author.", repo=S, number=N),
}


def tools_for(role: Role) -> list[dict[str, Any]]:
    return [{"name": name, **TOOL_SPECS[name]} for name in role.tools]


SERVICE_PATCH = """@@ -1,4 +1,9 @@
 import logging
+import pdb
{blank}
 def handle(event):
-    return process(event)
+    print("handling", event)
+    # TODO: validate the event schema
+    breakpoint()
+    result = process(event)
+    return result
""".format(blank=" ")
UTIL_PATCH = """@@ -10,3 +10,4 @@ def slug(text):
     text = text.strip().lower()
     text = text.replace(" ", "-")
+    text = text.replace("_", "-")
     return text
"""

PR_FILES = [
    {"filename": "src/app/service.py", "status": "modified", "patch": SERVICE_PATCH},
    {"filename": "src/app/util.py", "status": "modified", "patch": UTIL_PATCH},
    {"filename": "README.md", "status": "modified", "patch": "@@ -1 +1,2 @@\n # app\n+More."},
    {"filename": "src/app/extra.py", "status": "added", "patch": "@@ -0,0 +1 @@\n+X = 1"},
]


class ToolFailed(Exception):
    """Raised by a fake tool to send an ``is_error`` tool result back to the model."""


@dataclass
class FakeRepo:
    """Answers the read tools from an in-memory pull request; records the write tools."""

    title: str = "Handle events"
    body: str = "This PR makes event handling explicit."
    files: list[dict[str, Any]] = field(default_factory=lambda: list(PR_FILES))
    per_page: int = 3
    writes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    async def call(self, name: str, raw_args: Any) -> ToolResult:
        """The loop's ``Tools`` port: a ``ToolFailed`` is an error result, as real tools do."""
        try:
            return ToolResult(self.execute(name, dict(raw_args)))
        except ToolFailed as exc:
            return ToolResult(f"{name} failed: {exc}", is_error=True)

    def execute(self, name: str, args: dict[str, Any]) -> str:
        if name == "get_pull":
            return json.dumps(
                {
                    "number": args.get("number"),
                    "title": wrap_untrusted("pr_title", self.title),
                    "body": wrap_untrusted("pr_body", self.body),
                    "head": {"sha": "abc123"},
                }
            )
        if name == "list_pull_files":
            page = int(args.get("page") or 1)
            chunk = self.files[(page - 1) * self.per_page : page * self.per_page]
            more = page * self.per_page < len(self.files)
            files = [{**f, "patch": wrap_untrusted("diff", f["patch"])} for f in chunk]
            return json.dumps({"files": files, "next_page": page + 1 if more else None})
        if name == "read_file":
            return wrap_untrusted("file", f"# contents of {args.get('path')}\n" + "x = 1\n" * 40)
        if name in ("submit_review", "comment_issue", "add_labels"):
            self.writes.append((name, args))
            return json.dumps({"ok": True})
        return json.dumps({"ok": True, "results": []})


def build_prefix(role: Role, *, memory: str = "", context: str = "") -> CachedPrefix:
    builder = (
        PrefixBuilder(role.render("agent", with_skills=False))
        .tools(tools_for(role))
        .memory_snapshot(memory)
        .skills([(s.name, s.description) for s in role.skills])
        .session_timestamp(T0)
    )
    if context:
        builder.context_file("CONTRIBUTING.md", context)
    return builder.build()


class TurnRecall:
    """Recall by turn number, as a session's ``recall``: turn 2 is the first one it is asked."""

    def __init__(self, by_turn: Mapping[int, Sequence[str]]) -> None:
        self.by_turn = by_turn
        self.turn = 1

    async def __call__(self, _query: str) -> Sequence[str]:
        self.turn += 1
        return self.by_turn.get(self.turn, ())


async def run_scripted(
    client: LLMClient,
    prefix: CachedPrefix,
    chain: OverlayChain,
    task: str,
    repo: FakeRepo,
    *,
    model: str = "claude-sonnet-4-6",
    max_turns: int = 12,
    max_tokens: int = 1024,
    recall: Mapping[int, Sequence[str]] | None = None,
) -> list[ModelTurn]:
    """One session of the real worker loop; returns its model turns, in order."""
    session = Session(
        prefix=prefix,
        chain=chain,
        model=model,
        max_tokens=max_tokens,
        task=task,
        recall=TurnRecall(recall or {}),
        clock=lambda: T0,
    )
    recorder = ListRecorder()
    await run_session(client, repo, recorder, session, Meter(Budgets(turns=max_turns)))
    return recorder.model_turns()
