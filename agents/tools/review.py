"""Posting exactly one review per (PR, head SHA, role), even across retries, re-runs and crashes.

Two guards: an idempotency key claimed atomically in the store, and a hidden marker in the review
body that is looked for among the PR's existing reviews before posting. The marker catches the
one case the key cannot: a worker that crashed after GitHub accepted its review but before the
store recorded it.
"""

from __future__ import annotations

from typing import Any

from agents.store.base import UnknownWorkerError
from agents.store.reviews import review_key as review_key
from agents.tools.context import PostedReview, WorkerContext

MARKER_PREFIX = "<!-- swarm:review key="


class ReviewInProgress(RuntimeError):
    """Another live worker holds this review's key; this one must not post a second review."""


def _holder_status(ctx: WorkerContext, worker_id: str) -> str | None:
    try:
        return ctx.store.get_worker(worker_id).status
    except UnknownWorkerError:
        return None


def marker(key: str) -> str:
    return f"{MARKER_PREFIX}{key} -->"


def find_marked(reviews: list[dict[str, Any]], key: str) -> dict[str, Any] | None:
    wanted = marker(key)
    return next((r for r in reviews if wanted in str(r.get("body") or "")), None)


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
    key = review_key(task.repo, task.number, task.head_sha, ctx.role_id)
    known = ctx.store.get_review_key(key)
    if known is not None and known.state == "posted":
        return PostedReview(known.review_id, known.review_url, 0, event, already_posted=True)
    if not ctx.store.claim_review_key(key, ctx.worker_id):
        known = ctx.store.get_review_key(key)
        if known is not None and known.state == "posted":
            return PostedReview(known.review_id, known.review_url, 0, event, already_posted=True)
        # Claimed but never marked posted: its worker died. GitHub has the last word.
        existing = find_marked(await ctx.gateway.list_reviews(task.repo, task.number), key)
        if existing is not None:
            return _adopt(ctx, key, existing, event)
        if known is not None:
            holder = _holder_status(ctx, known.worker_id)
            if holder in ("pending", "running") and known.worker_id != ctx.worker_id:
                raise ReviewInProgress(f"worker {known.worker_id} is posting this review now")
            ctx.store.release_review_key(key, known.worker_id)
        if not ctx.store.claim_review_key(key, ctx.worker_id):
            raise ReviewInProgress(f"another worker claimed review {key} a moment ago")
    else:
        existing = find_marked(await ctx.gateway.list_reviews(task.repo, task.number), key)
        if existing is not None:
            return _adopt(ctx, key, existing, event)
    try:
        posted = await ctx.gateway.create_review(
            task.repo,
            task.number,
            f"{body.rstrip()}\n\n{marker(key)}",
            event=event,
            commit_id=task.head_sha,
            comments=comments or None,
        )
    except BaseException:
        # Not posted (or not known to be): leave the key free for the next attempt, whose
        # marker check catches the case where GitHub did accept it.
        ctx.store.release_review_key(key, ctx.worker_id)
        raise
    review_id = int(posted.get("id") or 0)
    url = str(posted.get("html_url") or "")
    ctx.store.mark_review_posted(key, review_id, url)
    return PostedReview(review_id, url, len(comments), event)


def _adopt(ctx: WorkerContext, key: str, existing: dict[str, Any], event: str) -> PostedReview:
    review_id = int(existing.get("id") or 0)
    url = str(existing.get("html_url") or "")
    if ctx.store.get_review_key(key) is None:
        ctx.store.claim_review_key(key, ctx.worker_id)
    ctx.store.mark_review_posted(key, review_id, url)
    return PostedReview(review_id, url, 0, event, already_posted=True)
