"""A minimal tool loop for exercising the LLM layer against the scripted model.

Test scaffolding only (the product loop is ``agents/worker.py``): it plays GitHub from an
in-memory pull request so that prompt assembly, the real SDK and the fake provider meet.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from agents.llm.client import LLMClient, LLMResult
from agents.llm.prompt import CachedPrefix, PrefixBuilder
from agents.llm.request import OverlayChain, build_request
from agents.llm.turn import ToolResult, TurnContext, assistant_message, user_message
from agents.llm.untrusted import wrap_untrusted
from agents.roles import Role

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def _schema(**props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": sorted(props)}


S = {"type": "string"}
N = {"type": "integer"}
TOOL_SPECS: dict[str, dict[str, Any]] = {
    "get_pull": {
        "description": "Read a pull request's metadata: title, body, author, base and head.",
        "input_schema": _schema(repo=S, number=N),
    },
    "list_pull_files": {
        "description": "List the changed files of a pull request with their patches, paged.",
        "input_schema": _schema(repo=S, number=N, page=N),
    },
    "read_file": {
        "description": "Read one file of the repository at a commit (the PR head by default).",
        "input_schema": _schema(repo=S, path=S, ref=S),
    },
    "memory_search": {
        "description": "Search your memory (facts and procedures) for a query.",
        "input_schema": _schema(query=S),
    },
    "history_search": {
        "description": "Search earlier sessions' history (redacted) for a query.",
        "input_schema": _schema(query=S),
    },
    "memory_note": {
        "description": "Record a memory note for later sessions.",
        "input_schema": _schema(text=S),
    },
    "record_progress": {
        "description": "Record a goal checkpoint or decision, shown in the UI.",
        "input_schema": _schema(note=S),
    },
    "submit_review": {
        "description": "Submit one pull request review with inline comments (event COMMENT).",
        "input_schema": _schema(
            repo=S, number=N, event=S, body=S, comments={"type": "array", "items": {}}
        ),
    },
    "comment_issue": {
        "description": "Post one comment on an issue.",
        "input_schema": _schema(repo=S, number=N, body=S),
    },
    "add_labels": {
        "description": "Add labels to an issue.",
        "input_schema": _schema(repo=S, number=N, labels={"type": "array", "items": S}),
    },
    "get_issue": {
        "description": "Read an issue: title, body, labels, author.",
        "input_schema": _schema(repo=S, number=N),
    },
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


def run_tool(repo: FakeRepo, use: dict[str, Any]) -> ToolResult:
    try:
        return ToolResult(use["id"], repo.execute(use["name"], use["input"]))
    except ToolFailed as exc:
        return ToolResult(use["id"], f"{use['name']} failed: {exc}", is_error=True)


@dataclass
class FakeRepo:
    """Answers the read tools from an in-memory pull request; records the write tools."""

    title: str = "Handle events"
    body: str = "This PR makes event handling explicit."
    files: list[dict[str, Any]] = field(default_factory=lambda: list(PR_FILES))
    per_page: int = 3
    writes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

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


@dataclass
class Call:
    request: dict[str, Any]
    result: LLMResult
    chain: list[str]


async def run_session(
    client: LLMClient,
    prefix: CachedPrefix,
    chain: OverlayChain,
    task: str,
    repo: FakeRepo,
    *,
    model: str = "claude-sonnet-4-6",
    max_turns: int = 12,
    recall: dict[int, list[str]] | None = None,
    cache_history: bool = True,
) -> list[Call]:
    calls: list[Call] = []
    recall = recall or {}

    def context(turn: int) -> TurnContext:
        return TurnContext(
            task, {"turns": max_turns - turn + 1}, T0 + timedelta(seconds=turn), turn
        )

    messages: list[dict[str, Any]] = [user_message(context(1), recall=recall.get(1, []))]
    for turn in range(1, max_turns + 1):
        request = build_request(
            prefix, chain, messages, model=model, max_tokens=1024, cache_history=cache_history
        )
        result = await client.create(request)
        calls.append(Call(request, result, chain.resolved_chain()))
        messages.append(assistant_message(result.content))
        if result.stop_reason != "tool_use":
            break
        results = [
            ToolResult(t["id"], repo.execute(t["name"], t["input"])) for t in result.tool_uses
        ]
        messages.append(
            user_message(context(turn + 1), tool_results=results, recall=recall.get(turn + 1, []))
        )
    return calls
