"""What the scripted model does next, decided from the request alone (deterministic).

The task in the first user message picks the behaviour (review a pull request, triage an
issue, summarise shard reviews); the tool calls already made and their results, read back from
the history, pick the step. Only tools offered in the request's ``tools`` list are called, and
arguments are shaped to each tool's ``input_schema``: of ``repo`` (``owner/name``), ``owner``,
``number``/``pull_number``/``issue_number``, ``page``, ``path``, ``ref``/``sha``, ``body``,
``event``, ``comments`` (``path``, ``line``, ``side``, ``body``), ``labels``, ``note``, ``kind``
it fills those the schema names (all of them when a tool has no schema properties).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sandbox.model.diffscan import (
    ChangedFile,
    Finding,
    changed_files,
    findings,
    next_page,
    parse_json,
    walk,
)

_REF = re.compile(r"(?<![\w.-])([\w.-]+)/([\w.-]+)#(\d+)")  # anchored: linear on long text
_SHARD_LINE = re.compile(r"(?m)^\s*[-*]?\s*`?([\w./-]+\.\w+)`?:(\d+):\s*(.+?)\s*$")


@dataclass(frozen=True)
class Call:
    id: str
    name: str
    input: dict[str, Any]
    result: str | None
    is_error: bool = False


@dataclass(frozen=True)
class ToolCall:
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class Reply:
    text: str


Action = ToolCall | Reply


@dataclass
class Conversation:
    task: str
    tools: dict[str, dict[str, Any]]
    calls: list[Call] = field(default_factory=list)

    @classmethod
    def from_request(cls, body: Mapping[str, Any]) -> Conversation:
        tools = {str(t.get("name")): dict(t) for t in body.get("tools") or []}
        messages = list(body.get("messages") or [])
        task = _texts(messages[0].get("content")) if messages else ""
        inside = re.search(r"task:\s*(.*?)\s*</turn_context>", task, re.DOTALL)
        conv = cls(inside.group(1) if inside else task, tools)
        results: dict[str, tuple[str, bool]] = {}
        for message in messages:
            if message.get("role") == "user" and isinstance(message.get("content"), list):
                for block in message["content"]:
                    if block.get("type") == "tool_result":
                        results[str(block.get("tool_use_id"))] = (
                            _texts(block.get("content")),
                            bool(block.get("is_error")),
                        )
        for message in messages:
            if message.get("role") == "assistant" and isinstance(message.get("content"), list):
                for block in message["content"]:
                    if block.get("type") == "tool_use":
                        call_id = str(block.get("id"))
                        result, failed = results.get(call_id, (None, False))
                        name, args = str(block.get("name")), dict(block.get("input") or {})
                        conv.calls.append(Call(call_id, name, args, result, failed))
        return conv

    def called(self, name: str) -> list[Call]:
        return [c for c in self.calls if c.name == name]

    def offers(self, name: str) -> bool:
        return name in self.tools

    def call(self, name: str, values: Mapping[str, Any]) -> ToolCall:
        """A call to ``name`` with the values its schema asks for (all of them if it has none)."""
        schema = self.tools[name].get("input_schema") or {}
        props = schema.get("properties") if isinstance(schema, Mapping) else None
        if not isinstance(props, Mapping) or not props:
            return ToolCall(name, dict(values))
        args = {k: values[k] for k in props if k in values}
        if "repo" in props and "owner" not in props and "owner" in values:
            args["repo"] = f"{values['owner']}/{values['repo']}"
        return ToolCall(name, args)


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            _texts(b.get("text") if b.get("type") == "text" else b.get("content"))
            for b in content
            if isinstance(b, Mapping) and b.get("type") in ("text", "tool_result")
        )
    return ""


def next_action(conv: Conversation, *, read_files: bool = False) -> Action:
    task = conv.task.lower()
    if "summar" in task or re.search(r"\bshard reviews?\b", task):
        return _summarize(conv)
    if re.search(r"\b(triage|issue)\b", task) and "pull" not in task:
        return _triage(conv)
    if re.search(r"\b(review|pull request|pr)\b", task) or conv.offers("submit_review"):
        return _review(conv, read_files=read_files)
    if conv.offers("add_labels"):
        return _triage(conv)
    return Reply("I have no scripted behaviour for this task; nothing to do.")


def _ref_values(conv: Conversation) -> dict[str, Any]:
    match = _REF.search(conv.task)
    if not match:
        return {}
    owner, repo, number = match.group(1), match.group(2), int(match.group(3))
    return {
        "owner": owner,
        "repo": repo,
        "repository": f"{owner}/{repo}",
        "full_name": f"{owner}/{repo}",
        "number": number,
        "pull_number": number,
        "pr_number": number,
        "issue_number": number,
    }


def _head_sha(conv: Conversation) -> str | None:
    for call in conv.called("get_pull"):
        for obj in walk(parse_json(call.result or "")):
            head = obj.get("head")
            if isinstance(head, Mapping) and isinstance(head.get("sha"), str):
                return str(head["sha"])
            if isinstance(obj.get("head_sha"), str):
                return str(obj["head_sha"])
    return None


def _review(conv: Conversation, *, read_files: bool) -> Action:
    ref = _ref_values(conv)
    if conv.offers("get_pull") and not conv.called("get_pull"):
        return conv.call("get_pull", ref)
    files: list[ChangedFile] = []
    listings = conv.called("list_pull_files")
    for call in listings:
        files.extend(changed_files(call.result or ""))
    if conv.offers("list_pull_files"):
        if not listings:
            return conv.call("list_pull_files", {**ref, "page": 1})
        page = next_page(listings[-1].result or "")
        asked = {c.input.get("page") for c in listings}
        if page is not None and page not in asked:
            return conv.call("list_pull_files", {**ref, "page": page})
    if conv.offers("read_file"):
        already = {c.input.get("path") for c in conv.called("read_file")}
        for file in files:
            wanted = read_files or file.patch is None
            if wanted and file.status != "removed" and file.path not in already:
                values = {**ref, "path": file.path, "ref": _head_sha(conv), "sha": _head_sha(conv)}
                return conv.call("read_file", {k: v for k, v in values.items() if v is not None})
    found = findings(files)
    if conv.offers("record_progress") and not conv.called("record_progress"):
        note = f"Read {len(files)} changed file(s); {len(found)} finding(s) to post."
        return conv.call(
            "record_progress",
            {
                **ref,
                "note": note,
                "summary": note,
                "text": note,
                "message": note,
                "kind": "checkpoint",
                "goal": "review posted",
            },
        )
    if conv.offers("submit_review") and _should_submit(conv):
        values = _review_values(ref, found, len(files))
        return conv.call("submit_review", _without_inline(values, conv))
    return Reply(_summary(found, len(files)))


def _should_submit(conv: Conversation) -> bool:
    """Submit once; after a refused first attempt, try once more without inline comments."""
    attempts = conv.called("submit_review")
    return not attempts or (len(attempts) == 1 and attempts[0].is_error)


def _without_inline(values: dict[str, Any], conv: Conversation) -> dict[str, Any]:
    if not conv.called("submit_review"):
        return values
    return {**values, "comments": []}  # the findings stay listed in the body


def _review_values(ref: Mapping[str, Any], found: list[Finding], nfiles: int) -> dict[str, Any]:
    comments = [{"path": f.path, "line": f.line, "side": "RIGHT", "body": f.body} for f in found]
    return {**ref, "event": "COMMENT", "body": _summary(found, nfiles), "comments": comments}


def _summary(found: list[Finding], nfiles: int) -> str:
    if not found:
        return f"Reviewed {nfiles} changed file(s): no concrete problems found."
    lines = [f"Reviewed {nfiles} changed file(s): {len(found)} finding(s)."]
    lines += [f"- {f.path}:{f.line}: {f.body}" for f in found]
    return "\n".join(lines)


_LABEL_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("bug", re.compile(r"\b(bug|error|crash|traceback|exception|fails?|broken)\b", re.I)),
    ("enhancement", re.compile(r"\b(feature|support for|would be nice|add an? option)\b", re.I)),
    ("documentation", re.compile(r"\b(docs?|documentation|readme|typo)\b", re.I)),
    ("question", re.compile(r"\b(how do i|how to|question|is it possible)\b|\?\s*$", re.I)),
)


def _triage(conv: Conversation) -> Action:
    ref = _ref_values(conv)
    if conv.offers("get_issue") and not conv.called("get_issue"):
        return conv.call("get_issue", ref)
    text = "\n".join([conv.task, *(c.result or "" for c in conv.called("get_issue"))])
    labels = [name for name, rule in _LABEL_RULES if rule.search(text)] or ["needs-triage"]
    if conv.offers("add_labels") and not conv.called("add_labels"):
        return conv.call("add_labels", {**ref, "labels": labels})
    if conv.offers("comment_issue") and not conv.called("comment_issue"):
        body = (
            f"Thanks for the report. I labelled this as {', '.join(labels)}. "
            "A maintainer will follow up; a minimal reproduction helps the most."
        )
        return conv.call("comment_issue", {**ref, "body": body})
    return Reply(f"Triaged: labels {', '.join(labels)}; one comment posted.")


def shard_findings(text: str) -> list[Finding]:
    """Findings quoted in shard reviews: JSON comments or ``path:line: message`` lines."""
    found: list[Finding] = []
    for obj in walk(parse_json(text)):
        path, line, body = obj.get("path"), obj.get("line"), obj.get("body")
        if isinstance(path, str) and isinstance(line, int) and isinstance(body, str):
            found.append(Finding(path, line, body))
    for match in _SHARD_LINE.finditer(text):
        found.append(Finding(match.group(1), int(match.group(2)), match.group(3)))
    unique: dict[tuple[str, int, str], Finding] = {}
    for f in found:
        unique.setdefault((f.path, f.line, " ".join(f.body.lower().split())), f)
    return sorted(unique.values(), key=lambda f: (f.path, f.line))


def _summarize(conv: Conversation) -> Action:
    ref = _ref_values(conv)
    merged = shard_findings(conv.task)
    if conv.offers("submit_review") and _should_submit(conv):
        values = _review_values(ref, merged, len({f.path for f in merged}))
        values["body"] = f"Merged shard reviews: {len(merged)} distinct finding(s).\n" + "\n".join(
            f"- {f.path}:{f.line}: {f.body}" for f in merged
        )
        return conv.call("submit_review", _without_inline(values, conv))
    return Reply(f"Merged shard reviews into {len(merged)} distinct finding(s).")
