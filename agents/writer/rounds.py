"""Where a writer pull request's fix rounds stand, read back from GitHub and the store.

A fix round answers what blocks the writer's pull request: the reviewer bot's open findings at
or above the repository's ``writer.blocking`` severity, and, above them, the words of people
with write access since the last round (a "request changes" review, a review comment or a reply
in any thread). A finding counts only from the reviewer's verified bot login (its marker,
:func:`agents.posting.render.posted_finding`); a thread the reviewer resolved, or answered with
its "Fixed at" line, is closed. A person's approval ends the loop. Everything here is read; the
writes are :mod:`agents.kinds.fix`'s and :mod:`agents.tools.fix_tools`'.

Rounds are keyed in the store by the head they answered (:func:`round_key`): one round per
reviewed head, so a re-run after a crash never starts a second round on the same code, and the
number of rounds done is the number of those keys posted. "Since the last round" is read on
GitHub's own clock: after the writer's newest answer in a thread. GitHub's times are whole
seconds, so a person's reply in the same second as that answer carries the same time; between
two thread comments of one second the comment id decides (GitHub lists a pull request's review
comments "in ascending order by ID" by default, its REST reference for ``GET
/repos/{owner}/{repo}/pulls/{pull_number}/comments``, and ids are given as comments are made).
Before, such a reply was taken as older and the pull request marked ready with it unanswered
(seen in the suite once its sandbox writes were paced 50 ms apart, issue 33).
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from agents.github.issues import may_write
from agents.posting.findings import Severity, at_least, severity_rank
from agents.posting.render import posted_finding, says_fixed_not_resolved

if TYPE_CHECKING:
    from agents.github.endpoints import GitHubEndpoints
    from agents.github.models import Pull
    from agents.store import Store

MAX_WORDS_CHARS = 4000


def round_prefix(repo: str, number: int, role: str) -> str:
    """What the store keys of every fix round of ``role`` on pull request ``number`` start with."""
    return f"{repo}#{number}/fix:{role}@"


def round_key(repo: str, number: int, role: str, head: str) -> str:
    """The store key of the one fix round that answers the review of ``head``."""
    return f"{round_prefix(repo, number, role)}{head}"


def ready_key(repo: str, number: int, role: str) -> str:
    """The key of the one "ready for review" comment on the pull request."""
    return f"{repo}#{number}/fix-ready:{role}"


def stopped_key(repo: str, number: int, role: str) -> str:
    """The key of the one "Still open after N rounds" list written into the body."""
    return f"{repo}#{number}/fix-stopped:{role}"


def answer_key(repo: str, number: int, role: str, head: str, comment_id: int) -> str:
    """The key of the writer's one answer, in the round of ``head``, in a finding's thread."""
    return f"{round_key(repo, number, role, head)}/answer/{int(comment_id)}"


@dataclass(frozen=True)
class OpenFinding:
    """One thing a fix round answers. ``comment_id`` is the root comment of its thread (0: a
    review's own words, with no thread); ``person`` says a person wrote it (first in a round)."""

    comment_id: int
    path: str
    line: int
    severity: str
    category: str
    message: str
    by: str
    person: bool
    url: str = ""

    def view(self) -> dict[str, Any]:
        """The finding as the model reads it (inside untrusted delimiters)."""
        return {
            "thread": self.comment_id or None,
            "from": "a person with write access" if self.person else "the reviewer bot",
            "by": self.by,
            "path": self.path or None,
            "line": self.line or None,
            "severity": self.severity,
            "category": self.category,
            "message": self.message[:MAX_WORDS_CHARS],
        }


@dataclass(frozen=True)
class DoneRound:
    """A round done before: the head it answered and what it spent."""

    head: str
    worker_id: str
    at: datetime
    cost_usd: float = 0.0
    turns: int = 0


@dataclass
class RoundState:
    """A writer pull request as a fix round sees it."""

    head: str
    draft: bool
    body: str
    reviewed_head: str | None
    findings: list[OpenFinding] = field(default_factory=list)
    approved_by: str | None = None
    done: list[DoneRound] = field(default_factory=list)

    @property
    def blocking(self) -> bool:
        return bool(self.findings)

    def round_at_head(self) -> DoneRound | None:
        return next((r for r in self.done if r.head == self.head), None)


def _login(raw: Mapping[str, Any]) -> str:
    return str((raw.get("user") or {}).get("login") or "")


def _when(raw: Mapping[str, Any], *names: str) -> datetime | None:
    for name in names:
        text = raw.get(name)
        if isinstance(text, str) and text:
            try:
                return datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                continue
    return None


def _after(when: datetime | None, since: datetime | None) -> bool:
    if since is None:
        return True
    return when is not None and when > since


# A thread comment's place on GitHub's clock: its time (whole seconds), then its id.
Stamp = tuple[datetime, int]


def _stamp(comment: Mapping[str, Any]) -> Stamp | None:
    when = _when(comment, "created_at")
    return None if when is None else (when, int(comment.get("id") or 0))


def _comment_after(comment: Mapping[str, Any], since: Stamp | None) -> bool:
    """Whether a thread comment came after the writer's newest answer (``since``): a later
    second, or the same second and a later id."""
    if since is None:
        return True
    stamp = _stamp(comment)
    return stamp is not None and stamp > since


def done_rounds(store: Store, repo: str, number: int, role: str) -> list[DoneRound]:
    """The rounds the store says were done on the pull request, oldest first, each with what
    its worker spent (its recorded budgets; 0 while it has not finished)."""
    from agents.errors import SwarmError

    found: list[DoneRound] = []
    prefix = round_prefix(repo, number, role)
    for key in store.posted_review_keys(prefix):
        head = key[len(prefix) :]
        if "/" in head:
            continue  # a thread answer's key, not a round's
        record = store.get_review_key(key)
        if record is None:
            continue
        cost, turns = 0.0, 0
        try:
            used = store.get_worker(record.worker_id).budgets_used or {}
            cost = float(used.get("cost_usd") or 0.0)
            turns = int(used.get("turns") or 0)
        except (SwarmError, LookupError, ValueError, TypeError):
            pass
        found.append(DoneRound(head, record.worker_id, record.at, cost, turns))
    return found


async def round_state(
    gateway: GitHubEndpoints,
    store: Store,
    repo: str,
    pull: Pull,
    *,
    role: str,
    reviewers: Collection[str],
    blocking: Severity,
    bots: Collection[str] = (),
) -> RoundState:
    """Where ``pull``'s fix rounds stand: the reviewer bots' newest review and the blocking
    findings, people's words since the last round first, and a person's approval."""
    number = int(pull["number"])
    head = str((pull.get("head") or {}).get("sha") or "")
    done = await asyncio.to_thread(done_rounds, store, repo, number, role)
    state = RoundState(
        head=head,
        draft=bool(pull.get("draft")),
        body=str(pull.get("body") or ""),
        reviewed_head=None,
        done=done,
    )
    comments = await gateway.list_pull_review_comments(repo, number)
    # "Since the last round" on GitHub's own clock: the writer's newest answer in a thread.
    answered = [w for c in comments if _login(c) in bots and (w := _stamp(c))]
    since = max(answered) if answered else None
    writers: dict[str, bool] = {}

    async def person_may_write(login: str) -> bool:
        # A bot is never "a person in charge"; anyone else counts only with write access.
        if not login or login.endswith("[bot]") or login in bots or login in reviewers:
            return False
        if login not in writers:
            writers[login] = await may_write(gateway, repo, login)
        return writers[login]

    reviews = await gateway.list_reviews(repo, number)
    ours = [r for r in reviews if _login(r) in reviewers and r.get("state") != "PENDING"]
    if ours:
        newest = max(ours, key=lambda r: int(r.get("id") or 0))
        state.reviewed_head = str(newest.get("commit_id") or "") or None
    people: list[OpenFinding] = []
    latest: dict[str, Mapping[str, Any]] = {}
    for review in sorted(reviews, key=lambda r: int(r.get("id") or 0)):
        login = _login(review)
        if review.get("state") in ("APPROVED", "CHANGES_REQUESTED", "DISMISSED"):
            latest[login] = review
    for login, last in latest.items():
        if not await person_may_write(login):
            continue
        if last.get("state") == "APPROVED":
            state.approved_by = login
        elif last.get("state") == "CHANGES_REQUESTED" and _after(
            # A review's id is of another sequence than a comment's: only the time compares.
            _when(last, "submitted_at"),
            since[0] if since else None,
        ):
            words = str(last.get("body") or "").strip() or "(changes requested, no text)"
            people.append(
                OpenFinding(0, "", 0, "critical", "request", words, login, True, _url(last))
            )
    threads = await _threads(gateway, repo, number)
    bot: list[OpenFinding] = []
    for comment in comments:
        login = _login(comment)
        root = int(comment.get("in_reply_to_id") or comment.get("id") or 0)
        if login in reviewers and not comment.get("in_reply_to_id"):
            posted = next(
                (p for r in reviewers if (p := posted_finding(comment, r)) is not None), None
            )
            if posted is None or not at_least(posted.finding.severity, blocking):
                continue
            if threads.get(root, False) or _fixed(comments, root, reviewers):
                continue
            f = posted.finding
            bot.append(
                OpenFinding(
                    root,
                    f.path,
                    f.line,
                    f.severity,
                    f.category,
                    f.message,
                    login,
                    False,
                    posted.url,
                )
            )
        elif _comment_after(comment, since) and await person_may_write(login):
            # Resolved or not, a person's words in a thread are theirs to have answered.
            people.append(
                OpenFinding(
                    root,
                    str(comment.get("path") or ""),
                    int(comment.get("line") or comment.get("original_line") or 0),
                    "critical",
                    "request",
                    str(comment.get("body") or "").strip(),
                    login,
                    True,
                    str(comment.get("html_url") or ""),
                )
            )
    bot.sort(key=lambda f: (severity_rank(f.severity), f.path, f.line))  # type: ignore[arg-type]
    state.findings = people + bot
    return state


def _url(raw: Mapping[str, Any]) -> str:
    return str(raw.get("html_url") or "")


def _fixed(comments: Sequence[Mapping[str, Any]], root: int, reviewers: Collection[str]) -> bool:
    """Whether the reviewer said in the thread that the finding is fixed (it may not resolve)."""
    return any(
        c.get("in_reply_to_id") == root
        and _login(c) in reviewers
        and says_fixed_not_resolved(str(c.get("body") or ""))
        for c in comments
    )


async def _threads(gateway: GitHubEndpoints, repo: str, number: int) -> dict[int, bool]:
    """Root comment id -> whether its thread is resolved (GraphQL: REST does not say)."""
    resolved: dict[int, bool] = {}
    for thread in await gateway.list_review_threads(repo, number):
        first = ((thread.get("comments") or {}).get("nodes") or [{}])[0]
        root = int(first.get("databaseId") or 0)
        if root:
            resolved[root] = bool(thread.get("isResolved"))
    return resolved
