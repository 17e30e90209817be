"""Posting exactly one review per (PR, head SHA, role), even across retries, re-runs and crashes.

Two guards: an idempotency key claimed atomically in the store, and a hidden marker in the review
body that is looked for among the PR's existing reviews before posting. The marker catches the
one case the key cannot: a worker that crashed after GitHub accepted its review but before the
store recorded it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from agents.posting.keys import answer_key, find_marked, review_key, with_marker
from agents.posting.once import (
    Claim,
    Create,
    Find,
    Written,
    answered,
    claim_ahead,
    create_or_find,
    write_once,
)
from agents.store.base import UnknownWorkerError
from agents.tools.base import ToolError
from agents.tools.context import PostedReview, WorkerContext
from agents.tools.pull_files import snapshot

RERUN_NOTE = "**Re-review** (requested again at a head commit already reviewed)."


class ReviewInProgress(ToolError):
    """Another live worker holds this review's key; this one must not post a second review."""


def holder_alive(ctx: WorkerContext, claim: Claim) -> bool:
    """Whether the worker holding a claim is still at work (pending or running)."""
    try:
        return ctx.store.get_worker(claim.worker_id).status in ("pending", "running")
    except UnknownWorkerError:
        return False


async def worker_writes_once(
    ctx: WorkerContext, key: str, find: Find, create: Create, find_first: Find | None = None
) -> Written:
    """``write_once`` as a worker: its store, its id, and a claim that stands while its holder
    is still at work."""
    return await write_once(
        ctx.store,
        key,
        ctx.worker_id,
        find=find,
        create=create,
        alive=lambda claim: holder_alive(ctx, claim),
        find_first=find_first,
    )


def task_write_key(ctx: WorkerContext) -> str | None:
    """The key of the one write this worker's task ends in: its review, or its answer to a
    reply (None: a shard, a dry run, or a task of several writes or none)."""
    from agents.kinds import for_task  # the package: every kind registered

    task = ctx.task
    if ctx.is_shard or ctx.dry_run or task.number is None:
        return None
    kind = for_task(task.kind)
    if kind is not None and kind.write_key is not None:
        return kind.write_key(task, ctx.role_id)
    if task.kind == "respond" and task.reply_to is not None:
        return answer_key(task.repo, task.number, task.reply_to)
    if not task.reviews_pr or task.head_sha is None:
        return None
    return review_key(task.repo, task.number, task.head_sha, ctx.role_id, task.rerun)


async def claim_review(ctx: WorkerContext) -> Written | None:
    """Before the first model call: claim this task's write key (its review, or its answer),
    so of two runs at once only one spends tokens on it. None when this worker holds the key
    (it goes on), else why not: written already (its URL, "" when unknown) or another live
    worker writing it now (``held_by``).

    Shards post nothing and dry runs never look: both do their work whatever was posted.
    """
    key = task_write_key(ctx)
    if key is None:
        return None
    # This worker's row is written first: another worker judging the claim sees it alive.
    await ctx.store.writer.aflush(ctx.worker_id)
    before = await asyncio.to_thread(ctx.store.get_review_key, key)
    taken = await claim_ahead(
        ctx.store, key, ctx.worker_id, alive=lambda claim: holder_alive(ctx, claim)
    )
    ctx.claimed_fresh = before is None and taken is None
    if taken is not None and taken.already:
        return Written(False, taken.id, taken.url or "")
    return taken


async def post_once(
    ctx: WorkerContext,
    *,
    body: str,
    event: str,
    comments: list[dict[str, Any]],
) -> PostedReview:
    """Post the worker's single review, or report the one already posted for this key."""
    task = ctx.task
    assert task.number is not None and task.head_sha is not None
    key = review_key(task.repo, task.number, task.head_sha, ctx.role_id, task.rerun)
    if task.rerun:
        body = f"{RERUN_NOTE}\n\n{body}"

    async def find() -> Mapping[str, Any] | None:
        return await _marked_on_github(ctx, key)

    async def create() -> Mapping[str, Any]:
        return await create_or_find(
            lambda: _create(ctx, key, body, event, comments), find, f"review {key}"
        )

    written = await worker_writes_once(ctx, key, find, create, _found_by_discovery(ctx, key))
    if written.held_by is not None:
        raise ReviewInProgress(f"worker {written.held_by} is posting this review now")
    if written.already:
        return PostedReview(written.id, written.url, 0, event, already_posted=True)
    return PostedReview(written.id, written.url, len(comments), event)


async def _create(
    ctx: WorkerContext, key: str, body: str, event: str, comments: list[dict[str, Any]]
) -> Mapping[str, Any]:
    task = ctx.task
    assert task.number is not None
    return await ctx.gateway.create_review(
        task.repo,
        task.number,
        with_marker(body, key),
        event=event,
        commit_id=task.head_sha,
        comments=comments or None,
    )


def _found_by_discovery(ctx: WorkerContext, key: str) -> Find | None:
    """The marker check discovery made this run, when it still holds: this worker claimed the
    key from nobody (no earlier attempt can have posted it since discovery read the reviews)."""
    reviews = snapshot(ctx).reviews
    if not ctx.claimed_fresh or reviews is None:
        return None
    return answered(find_marked(reviews, key, ctx.bot_login))


async def _marked_on_github(ctx: WorkerContext, key: str) -> Mapping[str, Any] | None:
    task = ctx.task
    assert task.number is not None
    reviews = await ctx.gateway.list_reviews(task.repo, task.number)
    return find_marked(reviews, key, ctx.bot_login)
