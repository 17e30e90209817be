"""The GitHub markup of a review, written by code: the only module that makes it.

The model reports findings as data (:class:`agents.posting.findings.Finding`) and writes plain
text only; everything that is markup (severity labels, ```` ```suggestion ```` fences, code
fences, links, hidden markers, the summary's sections) is made here, around that text. Model
text enters through :func:`model_text` and nowhere else, so the outbound sanitiser at the GitHub
write choke point can tell the two apart: what ``model_text`` let through is the model's, the
rest is ours. The inverse, :func:`posted_finding`, reads a posted inline comment back into its
finding (the eval scores what was posted; the re-review follows what is still open).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from agents.posting.findings import (
    SEVERITIES,
    Category,
    Finding,
    finding_identity,
    finding_key,
)
from agents.posting.keys import (
    FindingMark,
    finding_marker,
    inert,
    parse_finding_mark,
    without_markers,
)

Placement = Literal["suggestion", "range", "line", "outside"]

TITLES: Mapping[str, str] = {s: s.capitalize() for s in SEVERITIES}
SUMMARY_TITLE = "### swarm review summary"
_BACKTICKS = re.compile(r"`+")
# A suggestion block's opening line; its closing fence is searched for apart (see _suggestion):
# one pattern with a lazy body before a back-reference rescanned the rest of the text for every
# opening line without a close.
_SUGGESTION = re.compile(r"^(?P<fence>`{3,})suggestion\n", re.M)
_HEADER = re.compile(r"^\*\*(?P<title>[A-Z][a-z]+)\*\* · (?P<category>[a-z]+)$", re.M)
SHORT = 100


# A fence that opens a suggestion, also inside a quote or a list item: its info string
# starts with the word. Possessive lead: its characters never start a fence.
_SUGGESTION_OPENER = re.compile(
    r"^(?P<lead>[ \t>*+\-0-9.)]*+(?:`{3,}|~{3,})[ \t]*+)(?=suggestion)", re.M | re.I
)


def model_text(text: str, *, code: bool = False) -> str:
    """Model-written text as it may stand inside our markup: no hidden-comment syntax (a marker
    is control data and is written by code only). Whitespace is kept: a replacement's
    indentation is code.

    Prose (``code`` False) opens no ```` ```suggestion ```` block: GitHub offers such a block
    to be committed, and only code decides where a suggestion goes (a finding's replacement, on
    lines it checked). A zero-width space before the word leaves the block as shown, a plain
    code block."""
    text = inert(text)
    return text if code else _SUGGESTION_OPENER.sub(lambda m: m["lead"] + "\u200b", text)


def fence_for(text: str) -> str:
    """A backtick fence longer than any backtick run in ``text``, so the text cannot close it."""
    longest = max((len(m.group()) for m in _BACKTICKS.finditer(text)), default=0)
    return "`" * max(3, longest + 1)


def _block(kind: str, body: str) -> str:
    fence = fence_for(body)
    return f"{fence}{kind}\n{body}\n{fence}" if body else f"{fence}{kind}\n{fence}"


def finding_body(finding: Finding, placement: Placement, sha: str) -> str:
    """An inline comment's body: severity and category, the message, the replacement (as a
    committable suggestion where ``placement`` allows one, else as a plain snippet), and the
    finding's marker."""
    parts = [
        f"**{TITLES[finding.severity]}** · {finding.category}",
        model_text(finding.message).strip(),
    ]
    if finding.replacement is not None:
        replacement = model_text(finding.replacement, code=True)
        if placement == "suggestion":
            parts.append(_block("suggestion", replacement))
        else:
            first, last = finding.lines
            where = f"line {last}" if first == last else f"lines {first}-{last}"
            parts.append(
                f"Suggested replacement for {where} (not committable here: not all of those "
                f"lines are in this diff):\n{_block('', replacement)}"
            )
    parts.append(finding_marker(mark_of(finding, sha)))
    return "\n\n".join(parts)


def mark_of(finding: Finding, sha: str) -> FindingMark:
    first, last = finding.lines
    return FindingMark(
        finding_key(finding),
        finding_identity(finding),
        finding.severity,
        finding.category,
        first,
        last,
        sha,
    )


def inline_comment(finding: Finding, placement: Placement, sha: str) -> dict[str, Any]:
    """The review comment (GitHub's REST shape) for a finding placed ``range``/``suggestion``
    (on all its lines) or ``line`` (on its last line only)."""
    comment: dict[str, Any] = {
        "path": finding.path,
        "line": finding.line,
        "side": "RIGHT",
        "body": finding_body(finding, placement, sha),
    }
    if placement != "line" and finding.start_line is not None and finding.start_line < finding.line:
        comment["start_line"] = finding.start_line
        comment["start_side"] = "RIGHT"
    return comment


@dataclass(frozen=True)
class PostedFinding:
    """A finding the bot posted inline, read back from GitHub: the comment it sits in, and the
    lines and commit its marker names (GitHub's own line fields move with later pushes)."""

    finding: Finding
    mark: FindingMark
    comment_id: int
    url: str

    @property
    def lines(self) -> tuple[int, int]:
        return self.mark.first, self.mark.last


def posted_finding(comment: Mapping[str, Any], bot_login: str | None) -> PostedFinding | None:
    """The finding in a review comment (GitHub's JSON), when the bot wrote it with a marker."""
    author = (comment.get("user") or {}).get("login")
    body = str(comment.get("body") or "")
    mark = parse_finding_mark(author, body, bot_login)
    if mark is None or mark.severity not in SEVERITIES:
        return None
    # A marker stands for the comment it was written into: the commit that comment was made on.
    made_on = comment.get("original_commit_id") or comment.get("commit_id")
    if made_on and mark.sha != made_on:
        return None
    message, replacement = _parts(body)
    try:
        finding = Finding(
            path=str(comment.get("path") or ""),
            line=mark.last,
            start_line=mark.first if mark.first != mark.last else None,
            severity=mark.severity,
            category=cast(Category, mark.category),
            message=message or "(no message)",
            replacement=replacement,
        )
    except ValueError:
        return None
    url = str(comment.get("html_url") or "")
    return PostedFinding(finding, mark, int(comment.get("id") or 0), url)


def _parts(body: str) -> tuple[str, str | None]:
    """(message, replacement of a committable suggestion) of a rendered finding's body."""
    text = without_markers(body)
    replacement = None
    suggestion = _suggestion(text)
    if suggestion is not None:
        start, replacement = suggestion
        text = text[:start]
    else:
        text = text.split("\n\nSuggested replacement for ", 1)[0]
    header = _HEADER.search(text)
    return (text[header.end() :] if header else text).strip(), replacement


def _suggestion(text: str) -> tuple[int, str] | None:
    """(where it starts, its text) of the first suggestion block in ``text`` that is closed: a
    line of its opening fence's backticks alone. A fence found unclosed once is not looked for
    again, so each fence length costs one scan."""
    unclosed: set[str] = set()
    for opener in _SUGGESTION.finditer(text):
        fence = opener["fence"]
        if fence in unclosed:
            continue
        close = re.compile(rf"^{fence}$", re.M).search(text, opener.end())
        if close is None:
            unclosed.add(fence)
            continue
        return opener.start(), text[opener.end() : close.start()].removesuffix("\n")
    return None


def finding_message(body: str) -> str:
    """The finding's own words in a rendered inline comment (any other text: without markers),
    what a person's reply to it is about."""
    return _parts(body)[0]


def review_pointer(summary_url: str | None, inline: int) -> str:
    """The review's body: one line pointing at the summary (the findings are inline)."""
    lead = "Findings are inline" if inline else "No new findings inline at this commit"
    where = f"here: {summary_url}" if summary_url else "in its conversation"
    return f"{lead}; the summary of this PR is {where}."


def answer_body(text: str) -> str:
    """The responder's answer in a thread: its plain text, and nothing of ours but the marker
    the write path adds."""
    return model_text(text).strip()


def resolution_reply(head_sha: str) -> str:
    """The one line the bot leaves in a thread it resolves."""
    return (
        f"Resolved: the code this finding was about changed in `{head_sha[:12]}` and the "
        "re-review no longer reports it."
    )


FIXED_REPLY = "Fixed at `"


def fixed_reply(head_sha: str) -> str:
    """The one line the bot leaves in a fixed finding's thread it may not resolve (GitHub
    resolves a thread only for a token with Contents: write; docs/security.md)."""
    return (
        f"{FIXED_REPLY}{head_sha[:12]}`: the code this finding was about changed and the "
        "re-review no longer reports it. The thread stays open: this App does not resolve "
        "threads here."
    )


def says_fixed_not_resolved(body: str) -> bool:
    return body.startswith(FIXED_REPLY)


def diff_line_url(review_url: str | None, path: str, line: int) -> str:
    """Where a new finding's comment shows in the PR's diff, without asking GitHub for the
    comment: the "Files changed" page's anchor of a file is ``diff-`` and the SHA-256 of its
    path, ``R`` and a line its right side. Built from the review's URL (the PR's, with the
    review's fragment); "" without one."""
    if not review_url:
        return ""
    pull = review_url.split("#", 1)[0].rstrip("/")
    return f"{pull}/files#diff-{hashlib.sha256(path.encode()).hexdigest()}R{line}"


@dataclass(frozen=True)
class Listed:
    """A finding as the summary lists it, with where it is (a link, or nothing)."""

    finding: Finding
    url: str = ""


@dataclass
class SummaryView:
    """Everything the summary shows, gathered by :mod:`agents.posting.summary`."""

    head_sha: str
    review_url: str | None
    what_changed: str  # the model's words (plain text)
    areas: Sequence[tuple[str, int, int, int]]  # (area, files, additions, deletions)
    open_findings: Sequence[Listed]
    outside_diff: Sequence[Finding] = ()
    below_threshold: Mapping[str, int] = field(default_factory=dict)  # severity -> count
    min_severity: str = "minor"
    over_cap: int = 0
    max_comments: int = 0
    resolved: Sequence[Listed] = ()
    # Fixed by this push, their threads left open (the App may not resolve them).
    fixed_open: Sequence[Listed] = ()
    not_reviewed: Sequence[tuple[str, str]] = ()  # (path, why)
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    model_calls: int = 0


def summary_body(view: SummaryView) -> str:
    """The summary comment's text (its marker is added by the exactly-once write path)."""
    head = f"`{view.head_sha[:12]}`"
    review = f" ([review]({view.review_url}))" if view.review_url else ""
    parts = [SUMMARY_TITLE, f"Last reviewed at {head}{review}."]
    parts.append("**What changed**\n\n" + _areas(view))
    parts.append("**Findings**\n\n" + _findings(view))
    if view.not_reviewed:
        rows = [f"- `{_path(p)}`: {why}" for p, why in view.not_reviewed]
        parts.append("**Files not reviewed**\n\n" + "\n".join(rows))
    tokens = view.input_tokens + view.output_tokens
    parts.append(
        f"**Cost**: ${view.cost_usd:.4f}, {tokens:,} tokens ({view.input_tokens:,} in, "
        f"{view.output_tokens:,} out), {view.model_calls} model call(s)."
    )
    return "\n\n".join(parts)


def _areas(view: SummaryView) -> str:
    rows = [
        f"- `{_path(area)}`: {files} file(s), +{added} -{removed}"
        for area, files, added, removed in view.areas
    ]
    said = model_text(view.what_changed).strip()
    return "\n".join([*([said, ""] if said else []), *rows]) or "(no changed files)"


def _findings(view: SummaryView) -> str:
    lines: list[str] = []
    for severity in SEVERITIES:
        listed = [x for x in view.open_findings if x.finding.severity == severity]
        if not listed:
            continue
        lines.append(f"- **{TITLES[severity]}** ({len(listed)})")
        lines += [f"  - {_item(x)}" for x in listed]
    if not lines:
        lines.append("- No open findings.")
    if view.outside_diff:
        lines.append(f"- Outside the diff ({len(view.outside_diff)}):")
        lines += [f"  - {_item(Listed(f))}" for f in view.outside_diff]
    folded = sum(view.below_threshold.values())
    if folded:
        counts = ", ".join(f"{n} {s}" for s in SEVERITIES if (n := view.below_threshold.get(s, 0)))
        lines.append(
            f"- Not shown inline: {folded} below `min_severity: {view.min_severity}` ({counts})."
        )
    if view.over_cap:
        lines.append(
            f"- Not shown inline: {view.over_cap} over `max_comments: {view.max_comments}`."
        )
    if view.resolved:
        lines.append(f"- Resolved by this push ({len(view.resolved)}):")
        lines += [f"  - {_item(x)}" for x in view.resolved]
    if view.fixed_open:
        lines.append(f"- Fixed by this push, thread left open ({len(view.fixed_open)}):")
        lines += [f"  - {_item(x)}" for x in view.fixed_open]
    return "\n".join(lines)


def _item(listed: Listed) -> str:
    f = listed.finding
    first, last = f.lines
    where = f"{_path(f.path)}:{first}" + (f"-{last}" if last != first else "")
    text = " ".join(model_text(f.message).split())
    short = text if len(text) <= SHORT else text[: SHORT - 3] + "..."
    label = f"`{where}`"
    link = f"[{label}]({listed.url})" if listed.url else label
    return f"{link} ({f.category}): {short}"


def _path(path: str) -> str:
    """A file name (the PR author picks it) inside our inline code: no backtick can end it."""
    return path.replace("`", "'")
