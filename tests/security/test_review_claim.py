"""The review key's claim is a line of defence of its own: two workers on the same PR and head SHA
at the same moment post exactly one review, on SQLite and on PostgreSQL. A reviewer claims the
key in the store before its first model call, so the one that loses the claim ends skipped
before it reads or spends anything, and a live worker's claim stops a second one from posting."""

from __future__ import annotations

import asyncio

import pytest

from agents.posting.keys import review_key
from agents.worker.record import StoreRecorder
from sandbox.github.seed import REVIEWER_BOT, WIDGETS, WIDGETS_PR_DEBUG_PRINT
from tests.security.conftest import bot_reviews
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio

PR = WIDGETS_PR_DEBUG_PRINT
REVIEWS = "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"


async def test_two_workers_at_the_same_moment_post_exactly_one_review(
    two_swarms: tuple[Swarm, Swarm],
) -> None:
    first, second = two_swarms
    sealed = [await s.dispatch(s.pull_task(WIDGETS, PR)) for s in two_swarms]
    try:
        outcomes = await asyncio.gather(first.run(sealed[0]), second.run(sealed[1]))
    finally:
        for s in two_swarms:
            await s.runtime.aclose()

    assert [r.user_login for r in bot_reviews(first, WIDGETS, PR)] == [REVIEWER_BOT]
    # The one that lost the claim ends skipped (nothing left to do) before its first model
    # call, naming who holds the key: the other worker while it works, or the review it posted
    # when it was done first (which of the two depends on how the workers interleave).
    ends = sorted((o.status, o.posted) for o in outcomes)
    assert ends == [("skipped", False), ("succeeded", True)], [o.reason for o in outcomes]
    [lost] = [o for o in outcomes if o.status == "skipped"]
    assert lost.reason and (
        "another worker" in lost.reason or "already reviewed at this head SHA" in lost.reason
    ), lost.reason
    assert lost.llm_calls == 0 and lost.cost_usd == 0
    posts = [r for r in first.sandbox.state.requests if r.method == "POST" and r.route == REVIEWS]
    assert len(posts) == 1


async def test_a_live_workers_claim_stops_a_second_worker_from_posting(
    two_swarms: tuple[Swarm, Swarm],
) -> None:
    first, second = two_swarms
    task = first.pull_task(WIDGETS, PR)
    holder = await first.dispatch(task)
    # The first worker is alive and has claimed the review; it has not posted yet.
    store = first.runtime.store
    StoreRecorder(store, holder.envelope.worker_id).register(holder, holder.envelope.roles.ids())
    store.writer.flush(holder.envelope.worker_id)
    key = review_key(WIDGETS, PR, str(task.head_sha), "reviewer")
    assert store.claim_review_key(key, holder.envelope.worker_id)
    try:
        outcome = await second.run(await second.dispatch(second.pull_task(WIDGETS, PR)))
    finally:
        for s in two_swarms:
            await s.runtime.aclose()

    assert not outcome.posted
    assert bot_reviews(first, WIDGETS, PR) == []
    record = store.get_review_key(key)
    assert record is not None and record.worker_id == holder.envelope.worker_id
