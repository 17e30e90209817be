"""The swarm-run flow under Prefect's test harness, against the sandbox GitHub and scripted model.

What a person relies on: one review per (PR, head SHA, role) whatever happens to the run, a
worker that cannot prove its identity fails visibly and writes nothing, one bad worker does not
sink the others, and a rate-limited identity is reported rather than slept on.
"""

from __future__ import annotations

import pytest

from agents.outcome import WorkerOutcome
from flows.run.fanout import watching_progress
from flows.run.report import RunReport, markdown_summary
from sandbox.github.seed import GADGETS, GADGETS_PR_LARGE, REPOS, REVIEWER_BOT, WIDGETS
from tests.run.conftest import Swarm, run_swarm, task_runs_of

pytestmark = pytest.mark.prefect

SEEDED_PRS = 6


def _by_status(report: RunReport, status: str) -> list[WorkerOutcome]:
    return [o for o in report.outcomes if o.status == status]


def test_each_pr_gets_exactly_one_review_and_a_rerun_posts_nothing(swarm: Swarm) -> None:
    progress: list[tuple[int, int]] = []
    with watching_progress(lambda done, total: progress.append((done, total))):
        state, report = run_swarm(repos=list(REPOS), shard_threshold_files=30, shard_size=15)
    assert state.is_completed(), state.message
    workers = len(report.outcomes)
    assert progress == [(n, workers) for n in range(1, workers + 1)]
    assert isinstance(report, RunReport)
    assert report.new_reviews == SEEDED_PRS
    assert set(swarm.review_counts().values()) == {1}
    # The 40-file PR went to three reviewer shards; only the summarizer posted.
    large = [o for o in report.outcomes if o.target.startswith(f"{GADGETS}#{GADGETS_PR_LARGE}")]
    assert sorted(o.role for o in large) == ["reviewer", "reviewer", "reviewer", "summarizer"]
    assert [o.role for o in large if o.posted] == ["summarizer"]
    # Every write the run made is counted against its caps, and the summary shows them.
    reviews = [c for c in report.writes.counts if c.operation == "review"]
    assert len(reviews) == SEEDED_PRS and {(c.sent, c.refused) for c in reviews} == {(1, 0)}
    assert "## Writes to GitHub (against this run's caps)" in markdown_summary(report)

    again_state, again = run_swarm(repos=list(REPOS), shard_threshold_files=30, shard_size=15)
    assert again_state.is_completed()
    assert again.new_reviews == 0
    assert again.idempotent_skips == SEEDED_PRS
    assert again.headline().startswith("0 new reviews posted, 6 already reviewed")
    assert set(swarm.review_counts().values()) == {1}


def test_a_flow_retry_after_failed_posts_reviews_each_pr_once(swarm: Swarm) -> None:
    # Two review posts are refused on the first attempt in a way that ends the worker (GitHub
    # refusing our own token; a 422 would be the model's to handle); the flow ends FAILED and
    # Prefect retries it.
    swarm.state.inject_failure(
        "/repos/{owner}/{repo}/pulls/{pull_number}/reviews", status=401, count=2, method="POST"
    )
    state, report = run_swarm(
        repos=[WIDGETS], flow_options={"retries": 1, "retry_delay_seconds": 0}
    )
    assert state.is_completed(), state.message
    widget_counts = {k: v for k, v in swarm.review_counts().items() if k.startswith(WIDGETS)}
    assert set(widget_counts.values()) == {1}
    # The retry only redid what had failed; the others were already reviewed at their SHA.
    assert report.already_reviewed == len(widget_counts) - 2
    assert report.new_reviews == 2


def test_a_lost_store_does_not_lead_to_a_second_review(
    swarm: Swarm, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_swarm(repos=[WIDGETS])
    before = swarm.review_counts()
    # A fresh data directory: no review keys. The markers on GitHub still say "done".
    monkeypatch.setenv("SWARM_DATA_DIR", str(swarm.data_dir.parent / "fresh"))
    state, report = run_swarm(repos=[WIDGETS])
    assert state.is_completed()
    assert report.new_reviews == 0
    assert report.already_reviewed == 3
    assert swarm.review_counts() == before


def test_a_blocked_worker_fails_visibly_with_its_reason_and_writes_nothing(
    swarm: Swarm, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The envelope promises a login the token does not have: every worker must refuse.
    monkeypatch.setenv("SWARM_APP_BOT_LOGIN", "impostor[bot]")
    state, report = run_swarm(repos=[WIDGETS])
    assert state.is_failed()
    blocked = _by_status(report, "blocked")
    assert len(blocked) == 3
    assert all(o.reason and o.reason.startswith("BLOCKED: identity mismatch") for o in blocked)
    assert swarm.writes_by(REVIEWER_BOT) == []
    assert set(swarm.review_counts().values()) == {0}

    runs = [t for t in task_runs_of(state.state_details.flow_run_id) if t.name.startswith("review")]
    assert len(runs) == 3
    for task_run in runs:
        assert task_run.state.is_failed()
        assert task_run.state.name == "Blocked"
        assert {"role:reviewer", "identity:default", f"repo:{WIDGETS}"} <= set(task_run.tags)
        assert task_run.name.startswith(f"review {WIDGETS}#")
        assert task_run.name.endswith(" as reviewer")
        assert "BLOCKED: identity mismatch" in (task_run.state.message or "")
    assert "## Blocked or failed workers" in markdown_summary(report)


def test_a_failing_worker_does_not_take_the_run_down(swarm: Swarm) -> None:
    # GitHub refuses the first worker's own token (401) when it posts: that worker ends; the
    # rest carry on. (A 404 or 422 would be an error result its model works around: issue 10,
    # class 7.) Its reads came from discovery, so its post is its first call of its own.
    swarm.state.inject_failure(
        "/repos/{owner}/{repo}/pulls/{pull_number}/reviews", status=401, count=1, method="POST"
    )
    state, report = run_swarm(repos=[WIDGETS])
    assert state.is_failed()
    assert len(_by_status(report, "failed")) == 1
    assert len(_by_status(report, "succeeded")) == 2
    assert sorted(swarm.review_counts()[f"{WIDGETS}#{n}"] for n in (1, 2, 3)) == [0, 1, 1]
    assert "1 worker(s) blocked or failed" in (state.message or "")


def test_a_pr_discovery_cannot_read_is_reported_and_the_others_are_reviewed(
    swarm: Swarm,
) -> None:
    swarm.state.inject_failure(
        "/repos/{owner}/{repo}/pulls/{pull_number}/files", status=404, count=1, method="GET"
    )
    state, report = run_swarm(repos=[WIDGETS])
    assert state.is_failed()
    assert len(report.unreadable) == 1
    assert report.new_reviews == 2
    assert "could not be read" in report.headline()


def test_a_rate_limited_identity_is_reported_as_paused(swarm: Swarm) -> None:
    # A 429 without retry-after or reset: the gateway pauses the whole identity for at least a
    # minute, which is too long to sleep inline, so the worker reports the pause instead.
    swarm.state.inject_failure(
        "/repos/{owner}/{repo}/pulls/{pull_number}/reviews", status=429, count=1, method="POST"
    )
    state, report = run_swarm(repos=[WIDGETS])
    paused = _by_status(report, "paused")
    assert paused, [o.status for o in report.outcomes]
    assert report.paused and report.paused[0].identity == REVIEWER_BOT
    assert report.paused[0].paused_until is not None
    summary = markdown_summary(report)
    assert "## Paused identities" in summary
    assert REVIEWER_BOT in summary
    # Paused is not a failure: those PRs are picked up by the next run.
    assert state.is_completed(), state.message
    assert "paused by rate limits" in (state.message or "")


def test_a_dry_run_posts_nothing_and_shows_what_it_would_post(swarm: Swarm) -> None:
    state, report = run_swarm(repos=[WIDGETS], dry_run=True)
    assert state.is_completed(), state.message
    assert swarm.writes_by(REVIEWER_BOT) == []
    assert report.new_reviews == 3
    assert all(o.dry_run_preview for o in report.outcomes)
    assert report.headline().startswith("3 new reviews would be posted")
    assert "## Would post (dry run)" in markdown_summary(report)
    # Nothing was recorded as reviewed: the real run afterwards still reviews every PR.
    _, real = run_swarm(repos=[WIDGETS])
    assert real.new_reviews == 3
