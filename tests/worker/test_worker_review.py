"""The worker end to end: real sandbox GitHub, real anthropic SDK against the scripted model."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from agents.posting.findings import Finding
from agents.store import NewWorker
from agents.work import Shard, Spend, Task
from flows.run.report import RunReport
from sandbox.github.seed import GADGETS, WIDGETS, WIDGETS_PR_CLEAN, WIDGETS_PR_DEBUG_PRINT
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio


def reviews_on(swarm: Swarm, repo: str, number: int) -> list[Any]:
    pull = swarm.sandbox.state.pull(repo, number).pull
    assert pull is not None
    return list(pull.reviews)


def comments_of(swarm: Swarm, repo: str, number: int, review: Any) -> list[Any]:
    pull = swarm.sandbox.state.pull(repo, number).pull
    assert pull is not None
    return [c for c in pull.review_comments if c.review_id == review.id]


async def test_reviewer_posts_one_review_with_inline_comments_as_the_bot(swarm: Swarm) -> None:
    task = swarm.pull_task(WIDGETS, WIDGETS_PR_DEBUG_PRINT)
    outcome = await swarm.run(await swarm.dispatch(task))

    assert outcome.status == "succeeded", outcome.reason
    assert outcome.posted and outcome.review_url
    assert outcome.identity_login == "swarm-reviewer[bot]"
    reviews = reviews_on(swarm, WIDGETS, WIDGETS_PR_DEBUG_PRINT)
    assert len(reviews) == 1
    review = reviews[0]
    assert review.user_login == "swarm-reviewer[bot]"
    assert review.state == "COMMENTED"
    bodies = " ".join(c.body for c in comments_of(swarm, WIDGETS, WIDGETS_PR_DEBUG_PRINT, review))
    assert "print(" in bodies and "TODO" in bodies
    assert (
        f"swarm:review key={WIDGETS}#{WIDGETS_PR_DEBUG_PRINT}@{task.head_sha}:reviewer"
        in review.body
    )
    assert all(r.login != "octo-maintainer" for r in swarm.sandbox.state.requests)


async def test_cached_prefix_is_byte_identical_on_every_call_and_roles_stay_in_system(
    swarm: Swarm,
) -> None:
    task = swarm.pull_task(WIDGETS, WIDGETS_PR_DEBUG_PRINT)
    outcome = await swarm.run(await swarm.dispatch(task))
    requests = swarm.scripted.requests
    assert outcome.llm_calls == len(requests) >= 4
    prefixes = {json.dumps([requests_tools(r), r["system"][:6]], sort_keys=True) for r in requests}
    assert len(prefixes) == 1
    role_text = swarm.runtime.roles["reviewer"].prompt.identity
    for request in requests:
        assert role_text in json.dumps(request["system"])
        assert role_text not in json.dumps(request["messages"])
    transcript = json.dumps(
        [e.content for e in swarm.runtime.store.get_transcript(outcome.worker_id)]
    )
    assert role_text not in transcript
    # every call after the first reads the prefix from the cache
    assert outcome.cache_read_tokens > 0
    hashes = {c.prefix_hash for c in swarm.runtime.store.list_llm_calls(outcome.worker_id)}
    assert len(hashes) == 1


def requests_tools(request: dict[str, object]) -> object:
    return request.get("tools")


async def test_second_worker_for_the_same_head_sha_posts_nothing_and_is_stored_skipped(
    swarm: Swarm,
) -> None:
    task = swarm.pull_task(WIDGETS, WIDGETS_PR_DEBUG_PRINT)
    first = await swarm.run(await swarm.dispatch(task))
    second = await swarm.run(await swarm.dispatch(task))
    assert first.status == "succeeded"
    assert second.status == "skipped"
    store = swarm.runtime.store
    assert store.get_worker(first.worker_id).status == "succeeded"
    assert store.get_worker(second.worker_id).status == "skipped"  # not "succeeded"
    assert second.review_url == first.review_url
    assert len(reviews_on(swarm, WIDGETS, WIDGETS_PR_DEBUG_PRINT)) == 1


async def test_a_worker_skips_a_pr_another_run_is_reviewing_before_it_spends_a_token(
    swarm: Swarm,
) -> None:
    from agents.posting.keys import review_key

    store = swarm.runtime.store
    task = swarm.pull_task(WIDGETS, WIDGETS_PR_DEBUG_PRINT)
    # A worker of another run, at work on this PR at this head: it holds the review's key.
    other = store.create_worker(
        NewWorker(store.create_run("other"), role_chain=["reviewer"], status="running")
    )
    store.claim_review_key(
        review_key(WIDGETS, WIDGETS_PR_DEBUG_PRINT, str(task.head_sha), "reviewer"), other
    )

    outcome = await swarm.run(await swarm.dispatch(task))
    assert outcome.status == "skipped"
    assert outcome.reason == f"another worker ({other}) is reviewing this PR at this head now"
    assert outcome.held_by == other
    assert (outcome.llm_calls, outcome.input_tokens, outcome.cost_usd) == (0, 0, 0.0)
    assert reviews_on(swarm, WIDGETS, WIDGETS_PR_DEBUG_PRINT) == []
    # The run tells it apart from a PR already reviewed: it is not done yet.
    report = RunReport(run_id="r", role="reviewer", repos=[WIDGETS], outcomes=[outcome])
    assert report.headline() == (
        "0 new reviews posted, 0 already reviewed at this head SHA, "
        "1 being worked on by another run"
    )
    # Its row says so, for `swarm runs`.
    assert store.get_worker(outcome.worker_id).blocked_reason == outcome.reason


async def test_marker_on_github_prevents_a_second_review_when_the_store_lost_the_key(
    swarm: Swarm,
) -> None:
    task = swarm.pull_task(WIDGETS, WIDGETS_PR_DEBUG_PRINT)
    first = await swarm.run(await swarm.dispatch(task))
    # A crash after GitHub accepted the review but before the store recorded it.
    key = f"{WIDGETS}#{WIDGETS_PR_DEBUG_PRINT}@{task.head_sha}:reviewer"
    if not swarm.runtime.store.release_review_key(key, first.worker_id):
        _forget(swarm, key)
    second = await swarm.run(await swarm.dispatch(task))
    assert second.status == "succeeded"
    assert not second.posted
    assert len(reviews_on(swarm, WIDGETS, WIDGETS_PR_DEBUG_PRINT)) == 1


def _forget(swarm: Swarm, key: str) -> None:
    import sqlalchemy as sa

    from agents.store.schema import review_keys

    with swarm.runtime.store._db.write() as conn:
        conn.execute(sa.delete(review_keys).where(review_keys.c.key == key))


async def test_clean_pull_request_gets_a_review_without_inline_comments(swarm: Swarm) -> None:
    outcome = await swarm.review(WIDGETS, WIDGETS_PR_CLEAN)
    assert outcome.status == "succeeded"
    (review,) = reviews_on(swarm, WIDGETS, WIDGETS_PR_CLEAN)
    assert comments_of(swarm, WIDGETS, WIDGETS_PR_CLEAN, review) == []


async def test_dry_run_posts_nothing_and_returns_a_preview(
    make_swarm: Callable[..., Swarm],
) -> None:
    async with make_swarm(dry_run=True) as swarm:
        outcome = await swarm.run(
            await swarm.dispatch(swarm.pull_task(WIDGETS, WIDGETS_PR_DEBUG_PRINT))
        )
    assert outcome.status == "succeeded"
    assert outcome.dry_run_preview and "print(" in outcome.dry_run_preview
    assert swarm.writes() == []


async def test_shard_worker_records_findings_for_the_summarizer_and_posts_nothing(
    swarm: Swarm,
) -> None:
    files = tuple(sorted(pull_files(swarm, GADGETS, 1))[10:20])  # plugin_17 has a TODO
    task = swarm.pull_task(GADGETS, 1, files=files, shard=Shard(index=1, count=4))
    outcome = await swarm.run(await swarm.dispatch(task))
    assert outcome.status == "succeeded", outcome.reason
    assert swarm.writes() == []
    assert outcome.findings and all(f.path in files for f in outcome.findings)
    assert reviews_on(swarm, GADGETS, 1) == []


def pull_files(swarm: Swarm, repo: str, number: int) -> list[str]:
    pull = swarm.sandbox.state.pull(repo, number).pull
    assert pull is not None
    return [f.filename for f in pull.files]


async def test_summarizer_merges_shard_findings_into_one_review_and_counts_their_cost(
    swarm: Swarm,
) -> None:
    pull = swarm.sandbox.state.pull(GADGETS, 1).pull
    assert pull is not None
    todo = Finding(
        path="src/gadgets/plugins/plugin_17.py",
        line=10,
        severity="minor",
        category="maintainability",
        message="TODO left in new code.",
    )
    findings = (todo, todo)
    task = Task(kind="summarize", repo=GADGETS, number=1, head_sha=pull.head_sha)
    shards = Spend(cost_usd=1.25, input_tokens=90_000, output_tokens=900, model_calls=12)
    task = task.with_findings(findings, shards)
    outcome = await swarm.run(await swarm.dispatch(task, role="summarizer"))
    assert outcome.status == "succeeded", outcome.reason
    (review,) = reviews_on(swarm, GADGETS, 1)
    assert len(comments_of(swarm, GADGETS, 1, review)) == 1
    [summary] = [c.body for c in swarm.sandbox.state.pull(GADGETS, 1).comments]
    cost = re.search(r"\*\*Cost\*\*: \$(\d+\.\d+), ([\d,]+) tokens .*?, (\d+) model call", summary)
    assert cost is not None, summary
    assert float(cost[1]) > 1.25 and int(cost[2].replace(",", "")) > 90_900 and int(cost[3]) > 12


async def test_the_posted_summary_states_the_cost_and_calls_the_run_report_shows(
    swarm: Swarm,
) -> None:
    """The worker ends when its review is in: no closing model call after the summary has
    stated what the review cost, so the PR and `swarm runs` tell one number."""
    task = swarm.pull_task(WIDGETS, WIDGETS_PR_DEBUG_PRINT)
    outcome = await swarm.run(await swarm.dispatch(task))
    assert outcome.status == "succeeded", outcome.reason
    issue = swarm.sandbox.state.repo(WIDGETS).issues[WIDGETS_PR_DEBUG_PRINT]
    [cost_line] = [
        line for c in issue.comments for line in c.body.splitlines() if line.startswith("**Cost**")
    ]
    assert cost_line.startswith(f"**Cost**: ${outcome.cost_usd:.4f}, "), cost_line
    assert cost_line.endswith(f", {outcome.llm_calls} model call(s)."), cost_line
    assert len(swarm.scripted.requests) == outcome.llm_calls
