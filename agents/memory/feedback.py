"""Learnings from feedback on the bot's own review comments.

A reply or reaction by a person with write access to the repository is read as one of two
signals: a *dismissal* ("false positive", "won't fix", a thumbs-down) or a *correction* (any
other reply that is not a thanks). A review thread of the bot's that such a person *resolved*
is an *acknowledgement*: the finding was seen and dealt with (usually fixed), which says the
kind of finding is useful; it is never read as a dismissal, so it cannot silence a finding that
is still in the code. Each becomes a *proposed*, repository-scoped memory of kind
``learning``: the person's words quoted and attributed, the finding and the code line it was
about, and a link back. It is never an instruction: workers see accepted learnings only inside
``<untrusted>`` delimiters in the first user turn, never in a system block.

Who may teach is decided by the caller (bots and people without write access are dropped
before anything here runs); this module classifies, words and stores.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from agents.memory.ports import MemoryBackend, MemoryRow
from agents.memory_origin import MemoryOrigin

Signal = Literal["dismissal", "correction", "acknowledgement"]
# How the person said it: in words of their own, or by a thumbs-down or a resolved thread only.
Via = Literal["reply", "reaction", "resolution"]
QUOTE_CHARS = 600
CODE_CHARS = 200
FINDING_CHARS = 300
# People who may teach the bot: GitHub's collaborator permission, strongest first.
WRITE_PERMISSIONS = frozenset({"admin", "maintain", "write"})
MAINTAINER_PERMISSIONS = frozenset({"admin", "maintain"})

_DISMISSAL = re.compile(
    r"false[\s-]*positive|won'?t[\s-]*fix|wontfix|not an? (issue|problem|bug)|"
    r"\bnot applicable\b|\bintended\b|\bintentional\b|\bon purpose\b|\bby design\b|"
    r"\bexpected here\b|\bignore (this|it)\b|\bnoise\b|\bis fine here\b|\bnot relevant\b",
    re.IGNORECASE,
)
_THANKS = re.compile(
    r"^\W*(thanks?( you)?|ty|fixed|done|good catch|nice catch|agreed|will fix|\+1|lgtm)\b[\W]*$",
    re.IGNORECASE,
)
DISMISSING_REACTIONS = frozenset({"-1"})


def classify_reply(text: str) -> Signal | None:
    """What a reply to the bot's comment says about that comment; None for a thanks."""
    flat = " ".join(text.split())
    if not flat or _THANKS.match(flat):
        return None
    return "dismissal" if _DISMISSAL.search(flat) else "correction"


def classify_reaction(content: str) -> Signal | None:
    return "dismissal" if content in DISMISSING_REACTIONS else None


@dataclass(frozen=True)
class Feedback:
    """One person's reply, reaction or thread resolution on one of the bot's review comments."""

    repo: str
    pr_number: int
    comment_id: int
    comment_url: str
    path: str
    line: int | None
    code: str  # the commented line as it was when the bot commented
    finding: str  # the bot's comment
    by: str
    permission: str
    signal: Signal
    said: str  # the reply's text, ":-1:" for a thumbs-down, "" for a resolved thread
    reply_url: str | None
    key: str  # unique per reply, reaction or resolution: read twice, proposed once
    via: Via = "reply"


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def learning_text(item: Feedback) -> str:
    """The learning as a quoted, attributed fact (never phrased as an order to the bot)."""
    where = f"{item.path}" + (f" line {item.line}" if item.line else "")
    about = (
        f'"{_clip(item.finding, FINDING_CHARS)}" on {where} of PR #{item.pr_number}, '
        f"code `{_clip(item.code, CODE_CHARS)}`"
    )
    who = f"@{item.by} ({item.permission} access)"
    if item.signal == "acknowledgement":
        return (
            f"{who} resolved the review thread of the finding {about}: "
            "acknowledged as useful, not dismissed"
        )
    verb = "dismissed" if item.signal == "dismissal" else "corrected"
    return f'{who} {verb} the review finding {about}, saying: "{_clip(item.said, QUOTE_CHARS)}"'


def propose(
    backend: MemoryBackend, item: Feedback, *, auto_accept: bool = False
) -> tuple[MemoryRow, bool]:
    """Store the learning (proposed, or accepted when ``auto_accept`` and a maintainer said
    it in words); returns it and whether it is new. Feedback seen before returns the stored row.

    A learning quotes the finding it is about, and the finding is the model's text, written
    under the influence of the PR it read: a thumbs-down or a resolved thread alone is not a
    person's word on that text, so it never activates it, whoever gave it; it waits for someone
    to accept it in ``swarm memory review``."""
    seen = backend.memory_by_source(item.key)
    if seen is not None:
        return seen, False
    accept = auto_accept and item.via == "reply" and item.permission in MAINTAINER_PERMISSIONS
    source = {
        "kind": "review_feedback",
        "signal": item.signal,
        "via": item.via,
        "by": item.by,
        "permission": item.permission,
        "comment_id": item.comment_id,
        "comment_url": item.comment_url,
        "reply_url": item.reply_url,
        "path": item.path,
        "line": item.line,
        "code": _clip(item.code, CODE_CHARS),
        "finding": _clip(item.finding, FINDING_CHARS),
    }
    if accept:
        source["reviewed_by"] = "auto-accept (maintainer)"
    row = backend.add_memory(
        "learning",
        learning_text(item),
        author=item.by,
        author_kind="person",
        repo=item.repo,
        state="active" if accept else "proposed",
        origin=MemoryOrigin(pr_number=item.pr_number, source=source, source_key=item.key),
    )
    return row, True


def accepted_learnings(backend: MemoryBackend, repo: str, limit: int = 12) -> Sequence[MemoryRow]:
    """The repository's accepted learnings, newest first, at most ``limit``."""
    rows = backend.list_memories(repo=repo, include_global=False)
    return [m for m in rows if m.kind == "learning"][::-1][:limit]
