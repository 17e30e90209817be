"""Review identity: the one definition of a review key, its hidden marker, whose markers count.

A review is identified by (repository, PR, head SHA, role). The key names it in the store, where
it is claimed atomically before posting, and the marker carries the same key inside the posted
review's body, so a review GitHub accepted is recognised even when the store never heard of it.
Planning, the review tool, the worker and the store ledger all go through this module.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("swarm.reviews")

_MARKER = "<!-- swarm:review key={key} -->"
_MARKER_RE = re.compile(r"<!--\s*swarm:review\s+key=(?P<key>[^\s>]+)\s*-->")
_KEY_RE = re.compile(r"^(?P<repo>[^#]+)#(?P<number>\d+)@(?P<sha>[^:]+):(?P<role>.+)$")


def review_key(repo: str, number: int, head_sha: str, role: str, rerun: str | None = None) -> str:
    """The idempotency key of ``role``'s review of ``repo#number`` at ``head_sha``.

    A forced re-review (``/swarm review``, ``swarm run --force``) at an already reviewed head
    posts under ``<key>/rerun-<id>``: a new key, so it is posted once, and its role part is
    not the role's, so it never stands in for the role's own review of that head.
    """
    key = f"{repo}#{number}@{head_sha}:{role}"
    return f"{key}/rerun-{rerun}" if rerun else key


def review_key_prefix(repo: str, number: int) -> str:
    """What every key of one pull request starts with, whatever its SHA and role."""
    return f"{repo}#{number}@"


@dataclass(frozen=True)
class ReviewKey:
    repo: str
    number: int
    head_sha: str
    role: str


def parse_review_key(key: str) -> ReviewKey | None:
    """The parts of a key, or None for text that is not one."""
    found = _KEY_RE.match(key)
    if found is None:
        return None
    return ReviewKey(found["repo"], int(found["number"]), found["sha"], found["role"])


_HTML_COMMENT = re.compile(r"<!--|-->")


def inert(text: str) -> str:
    """``text`` with no hidden-comment syntax left, so nothing in it can read as a marker: the
    text of a body is the model's or a PR author's (file names), and markers are control data
    that only this module's writers add. Entities render as the characters they stand for."""
    return _HTML_COMMENT.sub(lambda m: "&lt;!--" if m.group() == "<!--" else "--&gt;", text)


def with_marker(body: str, key: str) -> str:
    """The review body as posted: the text (made inert), then the hidden marker on its own
    paragraph, the only one the body carries."""
    return f"{inert(body).rstrip()}\n\n{marker(key)}"


def marker(key: str) -> str:
    return _MARKER.format(key=key)


def parse_review_keys(body: str | None) -> list[str]:
    """Every swarm review key hidden in a review body (usually zero or one)."""
    return [m.group("key") for m in _MARKER_RE.finditer(body or "")]


def marker_counts(author: str | None, bot_login: str | None) -> bool:
    """Whether a marker in a review written by ``author`` counts for the bot ``bot_login``.

    The one trust rule for markers: only the role's own bot, by the login verified for this run,
    writes markers that count. Anyone can paste the marker text into a review of their own (a PR
    author doing so would suppress or narrow the bot's review), and without a verified login
    nothing counts: the store's review key is then the only record.
    """
    if not author or not bot_login:
        return False
    return author.casefold() == bot_login.casefold()


def marked_keys(author: str | None, body: str | None, bot_login: str | None) -> list[str]:
    """The keys of a review's markers that count, by the rule above; others are logged."""
    keys = parse_review_keys(body)
    if keys and not marker_counts(author, bot_login):
        log.warning(
            "ignored %d swarm review marker(s) in a review by %r: only %r writes markers",
            len(keys),
            author,
            bot_login,
        )
        return []
    return keys


def marked_at(key: str, repo: str, number: int, commit_id: str | None) -> bool:
    """Whether ``key`` names the review it was found in: that pull request, and the commit
    GitHub says the review is at. A marker for another head (one not pushed yet, written into
    the body by whatever text got there) or another PR stands for nothing."""
    parts = parse_review_key(key)
    return (
        parts is not None
        and parts.repo.casefold() == repo.casefold()
        and parts.number == number
        and bool(commit_id)
        and parts.head_sha == commit_id
    )


def find_marked(
    reviews: Iterable[Mapping[str, Any]], key: str, bot_login: str | None
) -> Mapping[str, Any] | None:
    """The review (GitHub's JSON) carrying ``key``'s counting marker at the commit ``key``
    names, if one was posted."""
    parts = parse_review_key(key)
    if parts is None:
        return None
    for review in reviews:
        author = (review.get("user") or {}).get("login")
        commit = review.get("commit_id")
        found = marked_keys(author, str(review.get("body") or ""), bot_login)
        if key in found and marked_at(key, parts.repo, parts.number, commit):
            return review
    return None


_COMMENT_MARKER = "<!-- swarm:comment key={key} -->"
_COMMENT_RE = re.compile(r"<!--\s*swarm:comment\s+key=(?P<key>[^\s>]+)\s*-->")


def comment_key(repo: str, number: int, role: str) -> str:
    """The key of ``role``'s single comment on ``repo#number`` (the triager's), whichever worker
    posts it: the store claims it once, and its marker finds a comment the store lost."""
    return f"{repo}#{number}:comment/{role}"


def with_comment_marker(body: str, key: str) -> str:
    """The comment body as posted: the text (made inert), then the hidden marker on its own
    paragraph, the only one the body carries."""
    return f"{inert(body).rstrip()}\n\n{_COMMENT_MARKER.format(key=key)}"


def find_own_comment(
    comments: Iterable[Mapping[str, Any]], key: str, bot_login: str | None
) -> Mapping[str, Any] | None:
    """The comment (GitHub's JSON) carrying ``key``'s marker, written by the bot itself."""
    for comment in comments:
        author = (comment.get("user") or {}).get("login")
        keys = [m["key"] for m in _COMMENT_RE.finditer(str(comment.get("body") or ""))]
        if key in keys and marker_counts(author, bot_login):
            return comment
    return None


def latest_reviewed_sha(
    posted: Iterable[str], repo: str, number: int, roles: Sequence[str]
) -> str | None:
    """The head SHA of the last key in ``posted`` (oldest first) for this PR and these roles."""
    latest: str | None = None
    for key in posted:
        parts = parse_review_key(key)
        if parts and parts.repo == repo and parts.number == number and parts.role in roles:
            latest = parts.head_sha
    return latest


def summary_key(repo: str, number: int) -> str:
    """The key of the bot's one summary comment on ``repo#number``: created once, by whichever
    review of the PR comes first, and edited by every later one (any head, any review role)."""
    return f"{repo}#{number}:summary"


def thread_key(repo: str, number: int, root_comment_id: int, what: str) -> str:
    """The key of one bot write in the review thread that ``root_comment_id`` starts, such as
    ``resolved`` (its one resolution)."""
    return f"{thread_key_prefix(repo, number)}{int(root_comment_id)}/{what}"


def thread_key_prefix(repo: str, number: int) -> str:
    """What the keys of every thread write on one pull request start with."""
    return f"{repo}#{number}:thread/"


def answer_key(repo: str, number: int, reply_id: int) -> str:
    """The key of the bot's one answer to a person's reply (review comment ``reply_id``)."""
    return f"{repo}#{number}:answer/{int(reply_id)}"


# A finding's marker: what the code knows about it, hidden in the inline comment it rendered.
_FINDING_MARKER = (
    "<!-- swarm:finding key={key} id={identity} severity={severity} category={category} "
    "lines={first}-{last} sha={sha} -->"
)
_FINDING_RE = re.compile(
    r"<!--\s*swarm:finding\s+key=(?P<key>[0-9a-f]{1,64})\s+id=(?P<identity>[0-9a-f]{1,64})"
    r"\s+severity=(?P<severity>[a-z]{1,16})\s+category=(?P<category>[a-z]{1,32})"
    r"\s+lines=(?P<first>\d{1,9})-(?P<last>\d{1,9})\s+sha=(?P<sha>[0-9a-f]{4,64})\s*-->"
)


@dataclass(frozen=True)
class FindingMark:
    """A finding marker's fields: the finding's key and identity (``agents.posting.findings``),
    severity, category, and the lines and commit it was posted at."""

    key: str
    identity: str
    severity: str
    category: str
    first: int
    last: int
    sha: str


def finding_marker(mark: FindingMark) -> str:
    return _FINDING_MARKER.format(
        key=mark.key,
        identity=mark.identity,
        severity=mark.severity,
        category=mark.category,
        first=mark.first,
        last=mark.last,
        sha=mark.sha,
    )


def parse_finding_mark(
    author: str | None, body: str | None, bot_login: str | None
) -> FindingMark | None:
    """The finding marker of a review comment, when the bot itself wrote the comment."""
    found = _FINDING_RE.search(body or "")
    if found is None or not marker_counts(author, bot_login):
        return None
    return FindingMark(
        found["key"],
        found["identity"],
        found["severity"],
        found["category"],
        int(found["first"]),
        int(found["last"]),
        found["sha"],
    )


def without_markers(body: str) -> str:
    """``body`` without any of swarm's hidden markers (the visible text)."""
    for pattern in (_MARKER_RE, _COMMENT_RE, _FINDING_RE):
        body = pattern.sub("", body)
    return body.rstrip()
