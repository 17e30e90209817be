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
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from agents.store.reviews import review_key as review_key

log = logging.getLogger("swarm.planning")

TaskKind = Literal["review_pr", "summarize", "triage_issue"]

_MARKER_RE = re.compile(r"<!--\s*swarm:review\s+key=(?P<key>[^\s>]+)\s*-->")


def parse_review_keys(body: str | None) -> list[str]:
    """Every swarm review key hidden in a review body (usually zero or one)."""
    return [m.group("key") for m in _MARKER_RE.finditer(body or "")]


def _role_of_key(key: str) -> str | None:
    _, sep, role = key.rpartition(":")
    return role if sep and role else None


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

    def last_reviewed_sha(self, repo: str, number: int, role: str) -> str | None: ...


class NoLedger:
    """A ledger that remembers nothing: discovery then relies on review markers alone."""

    def has_review(self, key: str) -> bool:
        return False

    def last_reviewed_sha(self, repo: str, number: int, role: str) -> str | None:
        return None


# -- what discovery produces ---------------------------------------------------------------------


class WorkItem(BaseModel):
    """One PR that needs this role's review at its current head SHA."""

    model_config = ConfigDict(frozen=True)

    kind: TaskKind = "review_pr"
    repo: str
    number: int
    title: str = ""
    head_sha: str
    base_sha: str | None = None
    since_sha: str | None = None
    files: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.repo}#{self.number} @{self.head_sha[:7]}"


@dataclass(frozen=True)
class SkippedItem:
    """A PR discovery left out, and why (shown in the run summary)."""

    repo: str
    number: int
    head_sha: str
    reason: Literal["already_reviewed", "draft", "unreadable"]
    detail: str | None = None


@dataclass
class Discovery:
    """Discovery's answer: the work to do and what was skipped."""

    items: list[WorkItem]
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
) -> Discovery:
    """Open PRs of ``repos`` that ``role`` has not yet reviewed at their head SHA.

    ``posting_roles`` are other roles whose review stands for this role's: the summarizer posts
    the single review of a sharded PR under its own key.
    """
    ledger = ledger or NoLedger()
    roles = (role, *[r for r in posting_roles if r != role])
    items: list[WorkItem] = []
    skipped: list[SkippedItem] = []
    for repo in repos:
        for pull in await source.open_pulls(repo):
            if pull.draft and not include_drafts:
                skipped.append(SkippedItem(repo, pull.number, pull.head_sha, "draft"))
                continue
            keys = {review_key(repo, pull.number, pull.head_sha, r) for r in roles}
            if any(ledger.has_review(k) for k in keys):
                skipped.append(SkippedItem(repo, pull.number, pull.head_sha, "already_reviewed"))
                continue
            since = ledger.last_reviewed_sha(repo, pull.number, role)
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
            reviewed_here, marker_since = _scan_markers(reviews, keys, roles)
            if reviewed_here:
                log.info("%s#%d already carries a review marker at this SHA", repo, pull.number)
                skipped.append(SkippedItem(repo, pull.number, pull.head_sha, "already_reviewed"))
                continue
            since = since or marker_since
            if since == pull.head_sha:
                since = None
            items.append(
                WorkItem(
                    repo=repo,
                    number=pull.number,
                    title=pull.title,
                    head_sha=pull.head_sha,
                    base_sha=pull.base_sha,
                    since_sha=since,
                    files=tuple(files),
                )
            )
    return Discovery(items=items, skipped=skipped)


def _scan_markers(
    reviews: Iterable[ExistingReview], keys: set[str], roles: Sequence[str]
) -> tuple[bool, str | None]:
    """(a review with one of these keys exists, the commit of these roles' latest review)."""
    latest: str | None = None
    for review in reviews:
        for found in parse_review_keys(review.body):
            if found in keys:
                return True, None
            if _role_of_key(found) in roles and review.commit_id:
                latest = review.commit_id
    return False, latest


# -- planning ------------------------------------------------------------------------------------


class Assignment(BaseModel):
    """One worker to dispatch: which role does what, on which PR (and which files, if sharded)."""

    model_config = ConfigDict(frozen=True)

    role: str
    kind: TaskKind
    repo: str
    number: int
    title: str = ""
    head_sha: str
    base_sha: str | None = None
    since_sha: str | None = None
    files: tuple[str, ...] = ()
    shard_index: int = 0
    shard_count: int = 1

    @property
    def pr(self) -> str:
        return f"{self.repo}#{self.number}"

    @property
    def is_shard(self) -> bool:
        return self.kind == "review_pr" and self.shard_count > 1

    @property
    def run_name(self) -> str:
        """The task run name people read in the Prefect UI."""
        verb = "summarize" if self.kind == "summarize" else "review"
        shard = f" [shard {self.shard_index + 1}/{self.shard_count}]" if self.is_shard else ""
        return f"{verb} {self.pr} @{self.head_sha[:7]}{shard} as {self.role}"

    def task_fields(self, parent_findings: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
        """Keyword arguments for ``agents.dispatch.WorkTask``."""
        return {
            "kind": self.kind,
            "repo": self.repo,
            "number": self.number,
            "head_sha": self.head_sha,
            "base_sha": self.base_sha,
            "since_sha": self.since_sha,
            "files": self.files,
            "title": self.title,
            "shard_index": self.shard_index if self.is_shard else None,
            "shard_count": self.shard_count if self.is_shard else None,
            "parent_findings": tuple(dict(f) for f in parent_findings),
        }


@dataclass
class PlannedPR:
    """All workers for one PR: a single reviewer, or shards plus the summarizer that posts."""

    reviewers: list[Assignment]
    summarizer: Assignment | None = None

    @property
    def assignments(self) -> list[Assignment]:
        return [*self.reviewers, *([self.summarizer] if self.summarizer else [])]


def plan_assignments(
    items: Sequence[WorkItem],
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
    for item in items:
        common: dict[str, Any] = {
            "repo": item.repo,
            "number": item.number,
            "title": item.title,
            "head_sha": item.head_sha,
            "base_sha": item.base_sha,
            "since_sha": item.since_sha,
        }
        if len(item.files) <= shard_threshold_files:
            planned.append(
                PlannedPR([Assignment(role=role, kind="review_pr", files=item.files, **common)])
            )
            continue
        chunks = [item.files[i : i + shard_size] for i in range(0, len(item.files), shard_size)]
        shards = [
            Assignment(
                role=role,
                kind="review_pr",
                files=chunk,
                shard_index=index,
                shard_count=len(chunks),
                **common,
            )
            for index, chunk in enumerate(chunks)
        ]
        summarizer = Assignment(role=summarizer_role, kind="summarize", files=item.files, **common)
        planned.append(PlannedPR(shards, summarizer))
    return planned
