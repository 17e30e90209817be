"""Sharding: one worker per pull request, or, for a PR with many files, several reviewer shards
plus one summarizer that merges their findings and posts the single review."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agents.work import Assignment, Shard, Task


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
