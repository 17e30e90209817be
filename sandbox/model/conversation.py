"""A request read back as a conversation: the task, the tools offered, the calls made so far
with their results, and what the model itself wrote along the way (its notes)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sandbox.model.diffscan import Finding, parse_json, walk

_REF = re.compile(r"(?<![\w.-])([\w.-]+)/([\w.-]+)#(\d+)")  # anchored: linear on long text
_FINDING_LINE = re.compile(r"(?m)^\s*[-*]?\s*`?([\w./-]+\.\w+)`?:(\d+):\s*(.+?)\s*$")
_OUTLINE = re.compile(r'<untrusted kind="pull_request_outline"[^>]*>\n(.*?)\n</untrusted>', re.S)
_OUTLINE_ROW = re.compile(r"(?m)^- (\S+) \((\w+)[^)]*\)(.*)$")


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
    note: str = ""  # what the model writes down beside the call (it survives stubbed results)


@dataclass(frozen=True)
class Reply:
    text: str


Action = ToolCall | Reply


@dataclass
class Conversation:
    task: str
    tools: dict[str, dict[str, Any]]
    calls: list[Call] = field(default_factory=list)
    notes: str = ""  # the model's own earlier words (assistant text), joined
    opening: str = ""  # the whole first user turn (task, recall, quoted briefing)

    @classmethod
    def from_request(cls, body: Mapping[str, Any]) -> Conversation:
        tools = {str(t.get("name")): dict(t) for t in body.get("tools") or []}
        messages = list(body.get("messages") or [])
        task = _texts(messages[0].get("content")) if messages else ""
        inside = re.search(r"task:\s*(.*?)\s*</turn_context>", task, re.DOTALL)
        conv = cls(inside.group(1) if inside else task, tools, opening=task)
        results: dict[str, tuple[str, bool]] = {}
        for message in messages:
            if message.get("role") == "user" and isinstance(message.get("content"), list):
                for block in message["content"]:
                    if block.get("type") == "tool_result":
                        results[str(block.get("tool_use_id"))] = (
                            _texts(block.get("content")),
                            bool(block.get("is_error")),
                        )
        said: list[str] = []
        for message in messages:
            if message.get("role") == "assistant" and isinstance(message.get("content"), list):
                for block in message["content"]:
                    if block.get("type") == "text":
                        said.append(str(block.get("text", "")))
                    if block.get("type") == "tool_use":
                        call_id = str(block.get("id"))
                        result, failed = results.get(call_id, (None, False))
                        name, args = str(block.get("name")), dict(block.get("input") or {})
                        conv.calls.append(Call(call_id, name, args, result, failed))
        conv.notes = "\n".join(said)
        return conv

    def called(self, name: str) -> list[Call]:
        return [c for c in self.calls if c.name == name]

    def offers(self, name: str) -> bool:
        return name in self.tools

    def accepts(self, name: str, argument: str) -> bool:
        """Whether ``name``'s schema names ``argument`` (so a call can carry it)."""
        schema = self.tools.get(name, {}).get("input_schema") or {}
        props = schema.get("properties") if isinstance(schema, Mapping) else None
        return isinstance(props, Mapping) and argument in props

    def call(self, name: str, values: Mapping[str, Any], note: str = "") -> ToolCall:
        """A call to ``name`` with the values its schema asks for (all of them if it has none)."""
        schema = self.tools[name].get("input_schema") or {}
        props = schema.get("properties") if isinstance(schema, Mapping) else None
        if not isinstance(props, Mapping) or not props:
            return ToolCall(name, dict(values), note)
        args = {k: values[k] for k in props if k in values}
        if "repo" in props and "owner" not in props and "owner" in values:
            args["repo"] = f"{values['owner']}/{values['repo']}"
        return ToolCall(name, args, note)


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


@dataclass(frozen=True)
class OutlineFile:
    """One changed file as the PR's outline in the first turn shows it."""

    path: str
    status: str
    test: bool
    mine: bool
    listed: bool


def outline(conv: Conversation) -> list[OutlineFile]:
    """The whole PR's files from the outline the worker put in its first turn (none without)."""
    found = _OUTLINE.search(conv.opening)
    if found is None:
        return []
    return [
        OutlineFile(
            m.group(1),
            m.group(2),
            "[test]" in m.group(3),
            "[yours]" in m.group(3),
            "[listed" in m.group(3),
        )
        for m in _OUTLINE_ROW.finditer(found.group(1))
    ]


def ref_values(conv: Conversation) -> dict[str, Any]:
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


def head_sha(conv: Conversation) -> str | None:
    for call in conv.called("get_pull"):
        for obj in walk(parse_json(call.result or "")):
            head = obj.get("head")
            if isinstance(head, Mapping) and isinstance(head.get("sha"), str):
                return str(head["sha"])
            if isinstance(obj.get("head_sha"), str):
                return str(obj["head_sha"])
    return None


def _json_values(text: str) -> list[Any]:
    """The JSON in ``text``: one value, or one per line (a shard brief lists one a line)."""
    whole = parse_json(text)
    values = [whole] if whole is not None else []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            values.append(parse_json(line))
    return values


def shard_findings(text: str) -> list[Finding]:
    """Findings quoted in shard reviews: JSON findings (swarm's report schema, or older
    comments with a ``body``) or ``path:line: message`` lines."""
    found: list[Finding] = []
    for obj in (o for value in _json_values(text) for o in walk(value)):
        path, line = obj.get("path"), obj.get("line")
        body = obj.get("message", obj.get("body"))
        if isinstance(path, str) and isinstance(line, int) and isinstance(body, str):
            start = obj.get("start_line")
            replacement = obj.get("replacement")
            found.append(
                Finding(
                    path,
                    line,
                    body,
                    severity=str(obj.get("severity") or ""),
                    category=str(obj.get("category") or ""),
                    start_line=start if isinstance(start, int) else None,
                    replacement=replacement if isinstance(replacement, str) else None,
                )
            )
    for match in _FINDING_LINE.finditer(text):
        found.append(Finding(match.group(1), int(match.group(2)), match.group(3)))
    unique: dict[tuple[str, int, str], Finding] = {}
    for f in found:
        unique.setdefault((f.path, f.line, " ".join(f.body.lower().split())), f)
    return sorted(unique.values(), key=lambda f: (f.path, f.line))
