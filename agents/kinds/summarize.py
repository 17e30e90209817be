"""Summarize a sharded pull request: one worker merges the shards' reviews into the PR's one
review. Never discovered on its own: a review run plans it for a PR too large for one reviewer
(:func:`agents.planning.shards.plan_assignments`), and its review key is the PR's at that head."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.kinds.kind import Kind
from agents.llm.untrusted import wrap_untrusted

if TYPE_CHECKING:
    from agents.work import Task


def describe(task: Task) -> str:
    """The summarizer's task line: the shards' findings, quoted as data."""
    sha = f" at head {task.head_sha}" if task.head_sha else ""
    findings = wrap_untrusted("reviewer_findings", task.brief or "(no findings)")
    return (
        f"Summarize the partial reviews of pull request {task.repo}#{task.number}{sha} into one "
        f"review and submit it. Reviewer findings (one JSON object a line, in the findings "
        f"schema):\n{findings}"
    )


KIND = Kind(
    name="summarize",
    summary="Merge a sharded pull request's reviews into one review",
    on="pulls",
    task="summarize",
    describe=describe,
)
