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

from agents.posting.notes import PullNote
from agents.work import Assignment, Shard, Task

# About how many tokens of patches one reviewer shard reads.
SHARD_TOKENS = 40_000
# The most shards one PR is split into; more means it cannot be reviewed within the caps.
MAX_SHARDS = 12
# What a review session reads besides the patches: prefix, guidance, outline, tool turns.
SESSION_TOKENS = 12_000
# A worker's token budget is this many times what its plan expects, never above its role's cap
# and never below the floor (a model that reads a few files more must not be cut off).
BUDGET_HEADROOM = 4
BUDGET_FLOOR = 100_000


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


def cut(sizes: Sequence[int], limit: int, max_files: int) -> list[tuple[int, int]]:
    """Balanced [start, end) ranges of ``sizes``: each about ``total / n`` tokens (never past
    ``limit`` where a file allows) and at most ``max_files`` entries."""
    total = sum(sizes)
    count = max(math.ceil(total / limit), math.ceil(len(sizes) / max_files), 1)
    most = min(limit, total / count * 1.1)
    ranges: list[tuple[int, int]] = []
    start, used = 0, 0
    for index, size in enumerate(sizes):
        if index > start and (used + size > most or index - start >= max_files):
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
    shard_threshold_files: int = 100,
    shard_size: int = 100,
    shard_tokens: int = SHARD_TOKENS,
    max_shards: int = MAX_SHARDS,
    summarizer_role: str = "summarizer",
) -> list[PlannedPR]:
    """One worker per PR; a PR with more than ``shard_tokens`` of patches to read (``sizes``,
    from discovery; a file of unknown size counts as a small one) or more than
    ``shard_threshold_files`` files is sharded, at most ``shard_size`` files a shard."""
    if shard_size < 1 or shard_tokens < 1:
        raise ValueError(f"shard_size and shard_tokens must be at least 1 ({shard_size})")
    if shard_threshold_files < shard_size:
        raise ValueError(
            f"shard_threshold_files ({shard_threshold_files}) must be at least "
            f"shard_size ({shard_size})"
        )
    planned: list[PlannedPR] = []
    for task in items:
        known = (sizes or {}).get((task.repo, task.number or 0), {})
        each = [known.get(path, 200) for path in task.files]
        total = sum(each)
        if len(task.files) <= shard_threshold_files and total <= shard_tokens:
            one = Assignment(role=role, task=task, expected_tokens=SESSION_TOKENS + 2 * total)
            planned.append(PlannedPR([one], task=task))
            continue
        ranges = cut(each, shard_tokens, shard_size)
        if len(ranges) > max_shards:
            reason = (
                f"about {total:,} tokens of patches in {len(task.files)} files need "
                f"{len(ranges)} shards; at most {max_shards} of about {shard_tokens:,} tokens "
                "are planned per pull request"
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
                expected_tokens=SESSION_TOKENS + 2 * sum(each[start:end]),
            )
            for index, (start, end) in enumerate(ranges)
        ]
        summarizer = Assignment(
            role=summarizer_role, task=task.model_copy(update={"kind": "summarize"})
        )
        planned.append(PlannedPR(shards, summarizer, task=task))
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
