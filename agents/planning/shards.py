"""Sharding by size: one worker per pull request, or, for a PR with more to read than one worker
should, several reviewer shards plus one summarizer that merges their findings and posts the
single review.

A shard is cut by the tokens its files' patches cost (``agents.planning.files``), not by a count
of files: twenty lock-step renames and one 900 KB data module are not the same work. Files stay
in GitHub's order (folders together) and the cuts are balanced, so shards come out about the
same size. Each worker's expected tokens ride with its assignment, so its budget follows from
its plan (:func:`worker_budget_tokens`); a PR that would need more shards than ``max_shards``
cannot fit its caps and gets a note before any model call.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from agents.outcome import EndCode, WorkerOutcome
from agents.planning.files import CHARS_PER_TOKEN, ENTRY_TOKENS
from agents.posting.notes import PullNote
from agents.work import Assignment, ListedFile, Shard, Task

# About how many tokens of patches one reviewer shard reads, at most.
SHARD_TOKENS = 40_000
# The most shards one PR is split into; more means it cannot be reviewed within the caps.
MAX_SHARDS = 12
# What a review session reads besides the patches: prefix, guidance, outline, tool turns.
SESSION_TOKENS = 12_000
# Calls a review makes besides reading pages (the PR, progress, the review, its last word), and
# the calls kept free for what a model reads beyond the plan (a file, a second look).
FIXED_CALLS = 4
SPARE_CALLS = 2
# What one call adds to the history besides the pages it reads, and what it writes.
TURN_TOKENS = 1_200
OUTPUT_TOKENS = 300
# A worker's token budget is this many times what its plan expects, never above its role's cap
# and never below the floor (a model that reads a few files more must not be cut off).
BUDGET_HEADROOM = 2
BUDGET_FLOOR = 100_000


@dataclass(frozen=True)
class ReadPlan:
    """What one reviewer can read: its session tier's page sizes and its role's turns.

    A shard is held to both its tokens and its calls: a 66 KB patch is eleven calls in 6,000-
    character pages, and a worker with 20 turns must have them."""

    patch_page_chars: int = 12_000
    file_page_chars: int = 40_000
    max_calls: int = 20
    shard_tokens: int = SHARD_TOKENS

    @classmethod
    def of(cls, patch_page_chars: int, file_page_chars: int, turns: int) -> ReadPlan:
        return cls(patch_page_chars, file_page_chars, turns)

    @property
    def reading_calls(self) -> int:
        return max(1, self.max_calls - FIXED_CALLS - SPARE_CALLS)

    @property
    def max_file_tokens(self) -> int:
        """The largest patch one worker reads in full (a larger one is listed)."""
        pages = max(1, self.reading_calls - 1)
        return min(
            self.shard_tokens, ENTRY_TOKENS + int(pages * self.patch_page_chars / CHARS_PER_TOKEN)
        )

    def calls(self, sizes: Sequence[int]) -> int:
        """The calls reading files of these token sizes takes: listing pages, and each long
        patch's further pages."""
        chars = [max(0, size - ENTRY_TOKENS) * CHARS_PER_TOKEN for size in sizes]
        listing = sum(min(c, self.patch_page_chars) + 200 for c in chars) / self.file_page_chars
        further = sum(max(0, math.ceil(c / self.patch_page_chars) - 1) for c in chars)
        return math.ceil(listing) + further

    def expected_tokens(self, sizes: Sequence[int]) -> int:
        """Billed tokens a review of these files is expected to spend: every call writes what it
        adds to the cache (1.25x) and rereads the history so far (0.1x)."""
        patches = sum(sizes)
        calls = FIXED_CALLS + self.calls(sizes)
        written = 1.25 * (SESSION_TOKENS + patches + calls * TURN_TOKENS)
        reread = 0.1 * calls * (SESSION_TOKENS + patches / 2 + calls * TURN_TOKENS / 2)
        return int(written + reread + calls * OUTPUT_TOKENS)


@dataclass(frozen=True)
class ShardCuts:
    """Where a pull request is cut into shards, whatever its tokens: past ``threshold_files``
    files, in shards of at most ``size`` files, and never into more than ``max_shards``."""

    threshold_files: int = 100
    size: int = 100
    max_shards: int = MAX_SHARDS

    def __post_init__(self) -> None:
        if self.size < 1:
            raise ValueError(f"shard_size must be at least 1 ({self.size})")
        if self.threshold_files < self.size:
            raise ValueError(
                f"shard_threshold_files ({self.threshold_files}) must be at least "
                f"shard_size ({self.size})"
            )


@dataclass
class PlannedPR:
    """All workers for one PR: a single reviewer, or shards plus the summarizer that posts;
    ``too_large`` says why no worker is planned at all."""

    reviewers: list[Assignment]
    summarizer: Assignment | None = None
    too_large: str | None = None
    task: Task | None = field(default=None, repr=False)

    @property
    def assignments(self) -> list[Assignment]:
        return [*self.reviewers, *([self.summarizer] if self.summarizer else [])]


def worker_budget_tokens(expected: int, cap: int) -> int:
    """A worker's token budget for a plan that expects ``expected`` tokens, within ``cap``."""
    if expected <= 0:
        return cap
    return min(cap, max(BUDGET_FLOOR, BUDGET_HEADROOM * expected))


def cut(sizes: Sequence[int], plan: ReadPlan, max_files: int) -> list[tuple[int, int]]:
    """Balanced [start, end) ranges of ``sizes``: each about ``total / n`` tokens (never past the
    plan's tokens or reading calls where a file allows) and at most ``max_files`` entries."""
    total = sum(sizes)
    count = max(
        math.ceil(total / plan.shard_tokens),
        math.ceil(plan.calls(sizes) / plan.reading_calls),
        math.ceil(len(sizes) / max_files),
        1,
    )
    most = min(plan.shard_tokens, total / count * 1.1)
    ranges: list[tuple[int, int]] = []
    start, used = 0, 0
    for index, size in enumerate(sizes):
        more = list(sizes[start : index + 1])
        full = used + size > most or plan.calls(more) > plan.reading_calls
        if index > start and (full or index - start >= max_files):
            ranges.append((start, index))
            start, used = index, 0
        used += size
    ranges.append((start, len(sizes)))
    return ranges


def plan_assignments(
    items: Sequence[Task],
    role: str,
    *,
    sizes: Mapping[tuple[str, int], Mapping[str, int]] | None = None,
    read: ReadPlan | None = None,
    cuts: ShardCuts | None = None,
    summarizer_role: str | None = None,
    replies: Sequence[Task] = (),
    reply_role: str | None = None,
) -> list[PlannedPR]:
    """One worker per PR; a PR with more to read than one worker's ``read`` plan allows (its
    patches' tokens from discovery's ``sizes``, a file of unknown size counting as a small one;
    the calls their pages take) or more than ``cuts.threshold_files`` files is sharded, at most
    ``cuts.size`` files a shard, and ``summarizer_role`` (the summarize kind's) merges the
    shards' reviews; without one, such a PR is too large. Each reply to answer in the bot's
    threads gets one worker of ``reply_role`` (the respond kind's) of its own."""
    plan = read or ReadPlan()
    cuts = cuts or ShardCuts()
    if plan.shard_tokens < 1:
        raise ValueError(f"shard_tokens must be at least 1 ({plan.shard_tokens})")
    shard_threshold_files, shard_size, max_shards = cuts.threshold_files, cuts.size, cuts.max_shards
    planned: list[PlannedPR] = []
    for task in items:
        if task.finishing:
            # Only what follows a posted review is left (its summary): no model reads anything.
            who = summarizer_role if task.kind == "summarize" else role
            if who is not None:
                planned.append(PlannedPR([Assignment(role=who, task=task)], task=task))
                continue
        known = (sizes or {}).get((task.repo, task.number or 0), {})
        each = [known.get(path, 200) for path in task.files]
        total = sum(each)
        fits = total <= plan.shard_tokens and plan.calls(each) <= plan.reading_calls
        if len(task.files) <= shard_threshold_files and fits:
            one = Assignment(role=role, task=task, expected_tokens=plan.expected_tokens(each))
            planned.append(PlannedPR([one], task=task))
            continue
        ranges = cut(each, plan, shard_size)
        if summarizer_role is None:
            reason = "it needs shards, and no role of the summarize kind merges them"
            planned.append(PlannedPR([], too_large=reason, task=task))
            continue
        if len(ranges) > max_shards:
            reason = (
                f"about {total:,} tokens of patches in {len(task.files)} files need "
                f"{len(ranges)} shards; at most {max_shards} of about {plan.shard_tokens:,} "
                "tokens are planned per pull request"
            )
            planned.append(PlannedPR([], too_large=reason, task=task))
            continue
        shards = [
            Assignment(
                role=role,
                task=task.model_copy(
                    update={
                        "files": task.files[start:end],
                        "shard": Shard(index=index, count=len(ranges)),
                    }
                ),
                expected_tokens=plan.expected_tokens(each[start:end]),
            )
            for index, (start, end) in enumerate(ranges)
        ]
        summarizer = Assignment(
            role=summarizer_role, task=task.model_copy(update={"kind": "summarize"})
        )
        planned.append(PlannedPR(shards, summarizer, task=task))
    if reply_role is not None:
        planned += [PlannedPR([Assignment(role=reply_role, task=t)]) for t in replies]
    return planned


def too_large_notes(plan: Sequence[PlannedPR], role: str) -> list[PullNote]:
    """A note for each planned PR that cannot fit its caps, naming its listed files too."""
    notes: list[PullNote] = []
    for planned in plan:
        task = planned.task
        if planned.too_large is None or task is None or task.number is None:
            continue
        notes.append(
            PullNote(
                repo=task.repo,
                number=task.number,
                head_sha=task.head_sha or "",
                role=role,
                reason=f"it is too large to review within the caps: {planned.too_large}",
                listed=task.listed,
                rerun=task.rerun,
            )
        )
    return notes


# The ends the next run at the same head would meet again: a token, turn, cost or GitHub-call
# budget, a full context window, replies that keep hitting the output limit. A wall-time budget
# (a slow GitHub, a loaded machine) and a refusal may pass.
LASTING_ENDS: frozenset[EndCode] = frozenset(
    {"turns", "tokens", "cost", "github_calls", "context_full", "output_limit"}
)


def lasting(outcome: WorkerOutcome) -> bool:
    """Whether the next run at the same head would end this worker the same way (its end code,
    never its reason's words)."""
    return outcome.status != "succeeded" and outcome.code in LASTING_ENDS


@dataclass(frozen=True)
class Settled:
    """What a PR's review does once its reviewers have ended.

    ``done``: nothing more (a single reviewer; its note, if any, in ``note``); ``retry``: a
    shard ended for a reason that may pass, so nothing is summarized and the next run does the
    PR again; ``note``: every shard ended for a lasting reason, the PR gets ``note`` and no
    summary; ``summarize``: the summarizer merges what finished, naming the files of the shards
    that did not (``left``)."""

    action: Literal["done", "retry", "note", "summarize"]
    note: PullNote | None = None
    left: tuple[ListedFile, ...] = ()
    unfinished: int = 0


def settle(planned: PlannedPR, outcomes: Sequence[WorkerOutcome]) -> Settled:
    """The review's next step from its reviewers' outcomes (one per reviewer, in order)."""
    pairs = list(zip(planned.reviewers, outcomes, strict=True))
    unfinished = [(a, o) for a, o in pairs if o.status != "succeeded"]
    transient = any(not lasting(o) for _a, o in unfinished)
    summarizer = planned.summarizer
    if summarizer is None:
        lost = bool(unfinished) and not transient
        return Settled("done", _note(planned.reviewers[0], unfinished) if lost else None)
    if transient:
        return Settled("retry", unfinished=len(unfinished))
    if len(unfinished) == len(pairs):
        return Settled("note", _note(summarizer, unfinished), unfinished=len(unfinished))
    return Settled("summarize", left=tuple(_left(unfinished)), unfinished=len(unfinished))


def _left(unfinished: Sequence[tuple[Assignment, WorkerOutcome]]) -> list[ListedFile]:
    """The files of shards that did not finish, each with why."""
    left: list[ListedFile] = []
    for assignment, outcome in unfinished:
        shard = assignment.task.shard
        part = f"shard {shard.index + 1} of {shard.count}" if shard else "its reviewer"
        why = f"not reviewed: {part} ended {outcome.status}: {outcome.reason or '-'}"
        left += [ListedFile(path=path, reason=why) for path in assignment.task.files]
    return left


def _note(
    assignment: Assignment, unfinished: Sequence[tuple[Assignment, WorkerOutcome]]
) -> PullNote:
    task = assignment.task
    assert task.number is not None and task.head_sha is not None
    reasons = "; ".join(dict.fromkeys(f"{o.status}: {o.reason}" for _a, o in unfinished))
    return PullNote(
        repo=task.repo,
        number=task.number,
        head_sha=task.head_sha,
        role=unfinished[0][0].role,
        reason=f"its review could not finish ({reasons})",
        listed=(*task.listed, *_left(unfinished)),
        rerun=task.rerun,
    )
