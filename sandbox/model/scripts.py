"""What the scripted model does next, decided from the request alone (deterministic).

The task in the first user message picks the behaviour (review a pull request, triage an
issue, summarise shard reviews); the tool calls already made and their results, read back from
the history, pick the step. Only tools offered in the request's ``tools`` list are called, and
arguments are shaped to each tool's ``input_schema``: of ``repo`` (``owner/name``), ``owner``,
``number``/``pull_number``/``issue_number``, ``page``, ``path``, ``ref``/``sha``, ``body``,
``event``, ``comments`` (``path``, ``line``, ``side``, ``body``), ``labels``, ``note``, ``kind``
it fills those the schema names (all of them when a tool has no schema properties).

A tool or kind from outside the shipped set (a test's, a plugin's) brings its own behaviour:
:func:`register_script` adds a step function tried before the shipped ones, and
:func:`call_in_turn` is the plain script that calls each named tool once, in order, with the
arguments it is given, then ends with a sentence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sandbox.model.answer import answer
from sandbox.model.conversation import (
    Action,
    Conversation,
    Reply,
    ToolCall,
    outline,
    ref_values,
    shard_findings,
)
from sandbox.model.diffscan import SOURCE_EXT
from sandbox.model.fix import fix
from sandbox.model.implement import implement, plan
from sandbox.model.judging import verdict
from sandbox.model.review import review, review_values, should_submit, without_inline

__all__ = [
    "Action",
    "Conversation",
    "Reply",
    "ToolCall",
    "call_in_turn",
    "next_action",
    "register_script",
    "unregister_script",
]

# A registered behaviour: when it applies to a conversation, and its next step there.
Applies = Callable[[Conversation], bool]
Step = Callable[[Conversation], Action]
_REGISTERED: dict[str, tuple[Applies, Step]] = {}


def register_script(name: str, applies: Applies, step: Step) -> None:
    """Add a behaviour, tried before the shipped ones, for the conversations ``applies`` picks
    (say, those offering a tool of its own)."""
    if name in _REGISTERED:
        raise ValueError(f"script {name!r} is already registered")
    _REGISTERED[name] = (applies, step)


def unregister_script(name: str) -> None:
    _REGISTERED.pop(name, None)


def call_in_turn(
    conv: Conversation, calls: Sequence[tuple[str, Mapping[str, Any]]], done: str
) -> Action:
    """Call each offered tool of ``calls`` once, in order, with its arguments; then say ``done``
    followed by the last result. A tool the request does not offer is passed over: the toolbox
    chose not to offer it, and the script never calls what it was not given."""
    for name, args in calls:
        if conv.offers(name) and not conv.called(name):
            return conv.call(name, dict(args))
    results = [c.result or "" for name, _ in calls for c in conv.called(name)]
    return Reply(f"{done} {results[-1] if results else ''}".strip())


def next_action(conv: Conversation, *, read_files: bool = False) -> Action:
    for applies, step in list(_REGISTERED.values()):
        if applies(conv):
            return step(conv)
    task = conv.task.lower()
    if "swarm-eval-judge" in task:
        return Reply(verdict(conv.opening))
    if conv.offers("push_fix"):
        return fix(conv)
    if conv.offers("open_pull_request"):
        return implement(conv)
    if conv.offers("propose_plan"):
        return plan(conv)
    if re.search(r"\banswer reply\b", task) or conv.offers("reply_in_thread"):
        return answer(conv)
    if "summar" in task or re.search(r"\bshard reviews?\b", task):
        return _summarize(conv)
    if re.search(r"\b(triage|issue)\b", task) and "pull" not in task:
        return _triage(conv)
    if re.search(r"\b(review|pull request|pr)\b", task) or conv.offers("submit_review"):
        return review(conv, read_files=read_files)
    if conv.offers("add_labels"):
        return _triage(conv)
    return Reply("I have no scripted behaviour for this task; nothing to do.")


_LABEL_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("bug", re.compile(r"\b(bug|error|crash|traceback|exception|fails?|broken)\b", re.I)),
    ("enhancement", re.compile(r"\b(feature|support for|would be nice|add an? option)\b", re.I)),
    ("documentation", re.compile(r"\b(docs?|documentation|readme|typo)\b", re.I)),
    ("question", re.compile(r"\b(how do i|how to|question|is it possible)\b|\?\s*$", re.I)),
)


def _triage(conv: Conversation) -> Action:
    ref = ref_values(conv)
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


def _summarize(conv: Conversation) -> Action:
    ref = ref_values(conv)
    merged = shard_findings(conv.task)
    if conv.offers("submit_review") and should_submit(conv):
        values = review_values(ref, merged, len({f.path for f in merged}))
        values["body"] = f"Merged shard reviews: {len(merged)} distinct finding(s).\n" + "\n".join(
            f"- {f.path}:{f.line}: {f.body}" for f in merged
        )
        values["summary"] = f"Merged shard reviews: {len(merged)} distinct finding(s)."
        # The one conclusion about the whole PR, drawn from its outline: only here.
        files = outline(conv)
        sources = [f for f in files if f.path.endswith(SOURCE_EXT) and not f.test and not f.listed]
        if (
            sources
            and not any(f.test for f in files)
            and any(f.status != "removed" for f in sources)
        ):
            values["summary"] += "\nThis pull request changes source files but no test changes."
        return conv.call("submit_review", without_inline(values, conv))
    return Reply(f"Merged shard reviews into {len(merged)} distinct finding(s).")
