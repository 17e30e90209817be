"""A run reads each PR's files and reviews once, in discovery, and its workers (every shard and the
summarizer) use that answer (issue 23: fetch each PR's data once per run and share it); the
summary comment is written once, after the review, not created and then edited."""

from __future__ import annotations

from collections import Counter

import pytest

from sandbox.github.seed import GADGETS, GADGETS_PR_LARGE, REPOS
from tests.run.conftest import Swarm, run_swarm

pytestmark = pytest.mark.prefect

PULL_READS = (
    "/repos/{owner}/{repo}/pulls/{pull_number}/files",
    "/repos/{owner}/{repo}/pulls/{pull_number}/reviews",
    "/repos/{owner}/{repo}/pulls/{pull_number}",
)


def _pull_of(path: str) -> str:
    """``/repos/acme/widgets/pulls/3/files`` (or ``issues/3/...``) as ``acme/widgets#3``."""
    parts = path.split("?")[0].split("/")
    return f"{parts[2]}/{parts[3]}#{parts[5]}"


def _calls(swarm: Swarm, method: str, routes: tuple[str, ...]) -> Counter[tuple[str, str]]:
    return Counter(
        (r.route, _pull_of(r.path))
        for r in swarm.state.requests
        if r.method == method and r.route in routes
    )


def test_each_pr_is_listed_and_its_reviews_read_once_whatever_its_workers(swarm: Swarm) -> None:
    state, report = run_swarm(repos=list(REPOS), shard_threshold_files=30, shard_size=15)
    assert state.is_completed(), state.message
    reviewed = {o.target.split("@")[0] for o in report.outcomes if o.posted}
    assert len(reviewed) == report.new_reviews > 1
    reads = _calls(swarm, "GET", PULL_READS)
    files = {n for (route, n), _ in reads.items() if route == PULL_READS[0]}
    assert files == reviewed  # every reviewed PR, the sharded one too
    assert {count for (route, _), count in reads.items() if route != PULL_READS[2]} == {1}
    assert not [key for key in reads if key[0] == PULL_READS[2]]  # the listing's PR is enough
    # The 40-file PR had three shards and a summarizer: its files were still read once.
    assert reads[(PULL_READS[0], f"{GADGETS}#{GADGETS_PR_LARGE}")] == 1
    assert any(o.target.startswith(f"{GADGETS}#{GADGETS_PR_LARGE}") for o in report.outcomes)


def test_a_prs_first_summary_is_one_write_after_its_review(swarm: Swarm) -> None:
    state, report = run_swarm(repos=list(REPOS), shard_threshold_files=30, shard_size=15)
    assert state.is_completed(), state.message
    writes = [
        (r.method, r.route)
        for r in swarm.state.requests
        if r.is_write and r.route.startswith("/repos/") and r.status < 300
    ]
    reviews = writes.count(("POST", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"))
    summaries = writes.count(("POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments"))
    assert reviews == summaries == report.new_reviews
    assert ("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}") not in writes
    # In each PR's order: its review first, then its summary.
    kinds: dict[str, list[str]] = {}
    for r in swarm.state.requests:
        if r.is_write and r.status < 300 and r.route.startswith("/repos/"):
            kinds.setdefault(_pull_of(r.path), []).append(r.route.rsplit("/", 1)[-1])
    assert kinds and all(k[:2] == ["reviews", "comments"] for k in kinds.values()), kinds
