"""The scripted responder: read the thread it was asked about, answer the marked reply once.

The answer is about the code, never an echo of what the person wrote (their words are data):
what the finding says, and whether its lines still read the same at the pull request's head.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sandbox.model.conversation import Action, Conversation, Reply, ref_values
from sandbox.model.diffscan import parse_json, walk


def _thread(conv: Conversation) -> Mapping[str, Any]:
    for call in reversed(conv.called("get_thread")):
        for obj in walk(parse_json(call.result or "")):
            if isinstance(obj.get("finding"), Mapping):
                return obj
    return {}


def answer_text(thread: Mapping[str, Any]) -> str:
    finding = thread.get("finding") or {}
    at_head = thread.get("lines_at_head") or {}
    where = f"{finding.get('path')} line {finding.get('line')}"
    said = str(finding.get("message") or "the finding").strip()
    if at_head.get("changed_since_the_finding"):
        return (
            f"The code this finding was about ({where}) has changed since it was posted. "
            f"The finding was: {said} If the change fixed it, the next review resolves this "
            "thread."
        )
    return (
        f"This finding is about {where} and still applies at the current head: {said} "
        "The lines are unchanged since the review."
    )


def answer(conv: Conversation) -> Action:
    ref = ref_values(conv)
    if conv.offers("get_thread") and not conv.called("get_thread"):
        return conv.call("get_thread", ref)
    tries = conv.called("reply_in_thread")
    if conv.offers("reply_in_thread") and (not tries or (len(tries) == 1 and tries[0].is_error)):
        thread = _thread(conv)
        if thread:
            return conv.call("reply_in_thread", {**ref, "body": answer_text(thread)})
    return Reply("Answered the reply in its thread." if tries else "Nothing to answer.")
