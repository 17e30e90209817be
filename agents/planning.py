"""Work discovery and assignment planning for a swarm run: plain Python, no Prefect.

Discovery answers "which open PRs need this role's review now?" Two independent records say a
PR was already reviewed at its head SHA: the store's review keys (fast, no GitHub call) and the
hidden marker the worker writes into every review body (survives a lost or fresh store). Either
one is enough to skip. A PR reviewed at an older SHA is re-reviewed with ``since_sha`` set, so the
worker looks only at what changed.

Planning turns each item into one worker, or, for a PR with many files, into several reviewer
shards plus one summarizer that merges their findings and posts the single review.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

from agents.github.errors import IdentityPaused, TokenRefused
from agents.reviews import marked_keys, parse_review_key, review_key
from agents.work import Assignment, Shard, Task

log = logging.getLogger("swarm.planning")


# -- what discovery reads ------------------------------------------------------------------------


class OpenPull(BaseModel):
    """An open pull request as the list endpoint describes it."""

    model_config = ConfigDict(frozen=True)

    repo: str
    number: int
    title: str = ""
    head_sha: str
    base_sha: str | None = None
    draft: bool = False


class ExistingReview(BaseModel):
    """A review already on a PR: who wrote it, at which commit, and its body (for the marker)."""

    model_config = ConfigDict(frozen=True)

    user_login: str | None = None
    commit_id: str | None = None
    body: str = ""


class PullSource(Protocol):
    """The three GitHub reads discovery needs. Implemented over the bot's gateway."""

    async def open_pulls(self, repo: str) -> list[OpenPull]: ...

    async def reviews(self, repo: str, number: int) -> list[ExistingReview]: ...

    async def changed_files(self, repo: str, number: int) -> list[str]: ...


class ReviewLedger(Protocol):
    """What the store remembers about posted reviews."""

    def has_review(self, key: str) -> bool: ...

    def last_reviewed_sha(self, repo: str, number: int, roles: Sequence[str]) -> str | None: ...


class NoLedger:
    """A ledger that remembers nothing: discovery then relies on review markers alone."""

    def has_review(self, key: str) -> bool:
        return False

    def last_reviewed_sha(self, repo: str, number: int, roles: Sequence[str]) -> str | None:
        return None


# -- what discovery produces ---------------------------------------------------------------------


@dataclass(frozen=True)
class SkippedItem:
    """A PR discovery left out, and why (shown in the run summary); number 0 stands for a whole
    repository whose pull requests could not be listed."""

    repo: str
    number: int
    head_sha: str
    reason: Literal["already_reviewed", "draft", "unreadable"]
    detail: str | None = None

    @property
    def where(self) -> str:
        return f"{self.repo}#{self.number}" if self.number else self.repo


@dataclass
class Discovery:
    """Discovery's answer: the review tasks to do (one per PR) and what was skipped."""

    items: list[Task]
    skipped: list[SkippedItem]

    @property
    def already_reviewed(self) -> int:
        return sum(1 for s in self.skipped if s.reason == "already_reviewed")

    @property
    def unreadable(self) -> list[SkippedItem]:
        return [s for s in self.skipped if s.reason == "unreadable"]


async def discover_work(
    source: PullSource,
    repos: Sequence[str],
    role: str,
    ledger: ReviewLedger | None = None,
    *,
    posting_roles: Sequence[str] = (),
    include_drafts: bool = False,
    bot_login: str | None = None,
) -> Discovery:
    """Open PRs of ``repos`` that ``role`` has not yet reviewed at their head SHA.

    ``posting_roles`` are other roles whose review stands for this role's: the summarizer posts
    the single review of a sharded PR under its own key. ``bot_login`` is the bot discovery
    reads as; whose review markers count is decided by :func:`agents.reviews.marker_counts`.
    """
    ledger = ledger or NoLedger()
    roles = (role, *[r for r in posting_roles if r != role])
    items: list[Task] = []
    skipped: list[SkippedItem] = []
    for repo in repos:
        try:
            pulls = await source.open_pulls(repo)
        except (TokenRefused, IdentityPaused):
            raise  # our own identity's failure or pause: every repository would fail alike
        except Exception as exc:
            # One repository that cannot be listed must not hide the others' pull requests.
            log.warning("%s: cannot list its pull requests: %s", repo, exc)
            skipped.append(SkippedItem(repo, 0, "", "unreadable", f"cannot list PRs: {exc}"))
            continue
        for pull in pulls:
            if pull.draft and not include_drafts:
                skipped.append(SkippedItem(repo, pull.number, pull.head_sha, "draft"))
                continue
            keys = {review_key(repo, pull.number, pull.head_sha, r) for r in roles}
            if any(ledger.has_review(k) for k in keys):
                skipped.append(SkippedItem(repo, pull.number, pull.head_sha, "already_reviewed"))
                continue
            since = ledger.last_reviewed_sha(repo, pull.number, roles)
            try:
                reviews = await source.reviews(repo, pull.number)
                files = await source.changed_files(repo, pull.number)
            except Exception as exc:
                # One unreadable PR must not hide the others; the next run tries it again.
                log.warning("%s#%d: cannot read it for planning: %s", repo, pull.number, exc)
                skipped.append(
                    SkippedItem(repo, pull.number, pull.head_sha, "unreadable", str(exc))
                )
                continue
            reviewed_here, marker_since = _scan_markers(reviews, keys, roles, bot_login)
            if reviewed_here:
                log.info("%s#%d already carries a review marker at this SHA", repo, pull.number)
                skipped.append(SkippedItem(repo, pull.number, pull.head_sha, "already_reviewed"))
                continue
            since = since or marker_since
            items.append(
                Task(
                    kind="review_pr",
                    repo=repo,
                    number=pull.number,
                    head_sha=pull.head_sha,
                    base_sha=pull.base_sha,
                    since_sha=since if since != pull.head_sha else None,
                    files=tuple(files),
                )
            )
    return Discovery(items=items, skipped=skipped)


def _scan_markers(
    reviews: Iterable[ExistingReview],
    keys: set[str],
    roles: Sequence[str],
    bot_login: str | None,
) -> tuple[bool, str | None]:
    """(a review with one of these keys exists, the commit of these roles' latest review)."""
    latest: str | None = None
    for review in reviews:
        for found in marked_keys(review.user_login, review.body, bot_login):
            if found in keys:
                return True, None
            parts = parse_review_key(found)
            if parts is not None and parts.role in roles and review.commit_id:
                latest = review.commit_id
    return False, latest


# -- planning ------------------------------------------------------------------------------------


@dataclass
class PlannedPR:
    """All workers for one PR: a single reviewer, or shards plus the summarizer that posts."""

    reviewers: list[Assignment]
    summarizer: Assignment | None = None

    @property
    def assignments(self) -> list[Assignment]:
        return [*self.reviewers, *([self.summarizer] if self.summarizer else [])]


def plan_assignments(
    items: Sequence[Task],
    role: str,
    *,
    shard_threshold_files: int = 40,
    shard_size: int = 20,
    summarizer_role: str = "summarizer",
) -> list[PlannedPR]:
    """One worker per PR; a PR with more than ``shard_threshold_files`` files is sharded."""
    if shard_size < 1:
        raise ValueError(f"shard_size must be at least 1, got {shard_size}")
    if shard_threshold_files < shard_size:
        raise ValueError(
            f"shard_threshold_files ({shard_threshold_files}) must be at least "
            f"shard_size ({shard_size})"
        )
    planned: list[PlannedPR] = []
    for task in items:
        if len(task.files) <= shard_threshold_files:
            planned.append(PlannedPR([Assignment(role=role, task=task)]))
            continue
        chunks = [task.files[i : i + shard_size] for i in range(0, len(task.files), shard_size)]
        shards = [
            Assignment(
                role=role,
                task=task.model_copy(
                    update={"files": chunk, "shard": Shard(index=index, count=len(chunks))}
                ),
            )
            for index, chunk in enumerate(chunks)
        ]
        summarizer = Assignment(
            role=summarizer_role, task=task.model_copy(update={"kind": "summarize"})
        )
        planned.append(PlannedPR(shards, summarizer))
    return planned
