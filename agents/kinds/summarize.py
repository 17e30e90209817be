"""Summarize a sharded pull request: one worker merges the shards' reviews into the PR's one
review. Never discovered on its own: a review run plans it for a PR too large for one reviewer
(:func:`agents.planning.shards.plan_assignments`), and its review key is the PR's at that head."""

from __future__ import annotations

from agents.kinds.kind import Kind

KIND = Kind(
    name="summarize",
    summary="Merge a sharded pull request's reviews into one review",
    on="pulls",
)
