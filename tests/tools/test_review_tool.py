"""The review tool posts one review per (PR, head SHA, role), whatever was lost on the way."""

from __future__ import annotations

import pytest

from agents.posting.keys import marker, review_key
from agents.posting.once import Written
from agents.posting.writer import PostedReview, ReviewWriter
from agents.tools import WorkerContext, build_toolbox
from agents.work import Shard
from sandbox.github.model import Review
from sandbox.github.seed import REVIEWER_BOT, WIDGETS, WIDGETS_PR_DEBUG_PRINT
from tests.tools.conftest import MakeContext
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio


async def claim_review(ctx: WorkerContext) -> Written | None:
    return await ReviewWriter(ctx).claim()


async def post_once(ctx: WorkerContext, body: str) -> PostedReview:
    return await ReviewWriter(ctx).post(body=body, event="COMMENT", comments=[])


def _reviews(swarm: Swarm) -> list[Review]:
    pull = swarm.sandbox.state.pull(WIDGETS, WIDGETS_PR_DEBUG_PRINT).pull
    assert pull is not None
    return list(pull.reviews)


async def test_a_posted_review_carries_its_marker_and_is_remembered(
    swarm: Swarm, tool_context: MakeContext
) -> None:
    task = swarm.pull_task(WIDGETS, WIDGETS_PR_DEBUG_PRINT)
    ctx = await tool_context(task)
    assert await claim_review(ctx) is None  # claimed before the work, then posted under it
    posted = await post_once(ctx, "Looks fine.")
    assert not posted.already_posted and posted.url
    key = review_key(WIDGETS, WIDGETS_PR_DEBUG_PRINT, str(task.head_sha), "reviewer")
    [review] = _reviews(swarm)
    assert review.body.endswith(marker(key))
    assert review.user_login == REVIEWER_BOT
    later = await claim_review(await tool_context(task))
    assert later is not None and later.already and later.url == posted.url


async def test_a_review_github_has_but_the_store_lost_is_adopted_not_posted_again(
    swarm: Swarm, tool_context: MakeContext
) -> None:
    task = swarm.pull_task(WIDGETS, WIDGETS_PR_DEBUG_PRINT)
    first = await post_once(await tool_context(task), "One.")
    key = review_key(WIDGETS, WIDGETS_PR_DEBUG_PRINT, str(task.head_sha), "reviewer")
    import sqlalchemy as sa

    from agents.store.schema import review_keys

    with swarm.runtime.store._db.write() as conn:
        conn.execute(sa.delete(review_keys).where(review_keys.c.key == key))
    again = await post_once(await tool_context(task), "Two.")
    assert again.already_posted and again.url == first.url
    assert len(_reviews(swarm)) == 1
    record = swarm.runtime.store.get_review_key(key)
    assert record is not None and record.state == "posted"


async def test_shards_and_dry_runs_never_skip_and_never_post(
    swarm: Swarm, tool_context: MakeContext
) -> None:
    task = swarm.pull_task(WIDGETS, WIDGETS_PR_DEBUG_PRINT)
    await post_once(await tool_context(task), "Posted.")
    shard = await tool_context(task.model_copy(update={"shard": Shard(index=0, count=2)}))
    dry = await tool_context(task, dry_run=True)
    assert await claim_review(shard) is None and await claim_review(dry) is None

    for ctx in (shard, dry):
        toolbox = build_toolbox(ctx, ["submit_review"])
        result = await toolbox.call("submit_review", {"body": "More.", "comments": []})
        assert not result.is_error, result.content
    assert shard.findings == [] and shard.review is None
    assert dry.preview is not None and dry.preview.startswith("[COMMENT] ")
    assert "More." in dry.preview
    assert len(_reviews(swarm)) == 1


async def _first_claims(
    swarm: Swarm, tool_context: MakeContext
) -> tuple[WorkerContext, WorkerContext]:
    """Two workers of one review; the first has claimed it."""
    task = swarm.pull_task(WIDGETS, WIDGETS_PR_DEBUG_PRINT)
    first, second = await tool_context(task), await tool_context(task)
    assert await claim_review(first) is None
    return first, second


async def test_a_second_worker_is_turned_away_by_a_live_workers_claim_before_any_work(
    swarm: Swarm, tool_context: MakeContext
) -> None:
    first, second = await _first_claims(swarm, tool_context)
    taken = await claim_review(second)
    assert taken is not None and taken.held_by == first.worker_id
    # The first goes on and posts under the claim it took before its work began.
    posted = await post_once(first, "Posted.")
    assert posted.url and not posted.already_posted
    assert len(_reviews(swarm)) == 1


async def test_the_claim_of_a_worker_that_ended_without_posting_is_taken_over(
    swarm: Swarm, tool_context: MakeContext
) -> None:
    first, second = await _first_claims(swarm, tool_context)
    swarm.runtime.store.finish_worker(first.worker_id, "failed", budgets_used={})
    assert await claim_review(second) is None
    key = review_key(WIDGETS, WIDGETS_PR_DEBUG_PRINT, str(first.task.head_sha), "reviewer")
    record = swarm.runtime.store.get_review_key(key)
    assert record is not None and record.worker_id == second.worker_id
