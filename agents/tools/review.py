"""Posting exactly one review per (PR, head SHA, role), even across retries, re-runs and crashes.

Two guards: an idempotency key claimed atomically in the store, and a hidden marker in the review
body that is looked for among the PR's existing reviews before posting. The marker catches the
one case the key cannot: a worker that crashed after GitHub accepted its review but before the
store recorded it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from agents.github.errors import GitHubApiError, GitHubUnavailable, TokenRefused
from agents.reviews import find_marked, review_key, with_marker
from agents.store.base import UnknownWorkerError
from agents.tools.base import ToolError
from agents.tools.context import PostedReview, WorkerContext

RERUN_NOTE = "**Re-review** (requested again at a head commit already reviewed)."

log = logging.getLogger("swarm.review")


class ReviewInProgress(ToolError):
    """Another live worker holds this review's key; this one must not post a second review."""


def _holder_status(ctx: WorkerContext, worker_id: str) -> str | None:
    try:
        return ctx.store.get_worker(worker_id).status
    except UnknownWorkerError:
        return None


def posted_review_url(ctx: WorkerContext) -> str | None:
    """The URL of the review already posted for this task's key ("" when unknown), or None.

    Shards post nothing and dry runs never look: both do their work whatever was posted.
    """
    task = ctx.task
    if not task.reviews_pr or ctx.is_shard or ctx.dry_run:
        return None
    if task.number is None or task.head_sha is None:
        return None
    key = review_key(task.repo, task.number, task.head_sha, ctx.role_id, task.rerun)
    known = ctx.store.get_review_key(key)
    if known is not None and known.state == "posted":
        return known.review_url or ""
    return None


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
    known = ctx.store.get_review_key(key)
    if known is not None and known.state == "posted":
        return PostedReview(known.review_id, known.review_url, 0, event, already_posted=True)
    if not ctx.store.claim_review_key(key, ctx.worker_id):
        known = ctx.store.get_review_key(key)
        if known is not None and known.state == "posted":
            return PostedReview(known.review_id, known.review_url, 0, event, already_posted=True)
        # Claimed but never marked posted: its worker died. GitHub has the last word.
        existing = await _marked_on_github(ctx, key)
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
        existing = await _marked_on_github(ctx, key)
        if existing is not None:
            return _adopt(ctx, key, existing, event)
    if task.rerun:
        body = f"{RERUN_NOTE}\n\n{body}"
    try:
        return await _post_and_record(ctx, key, body, event, comments)
    except BaseException:
        # Not posted (or not known to be): leave the key free for the next attempt, whose
        # marker check catches the case where GitHub did accept it.
        ctx.store.release_review_key(key, ctx.worker_id)
        raise


async def _post_and_record(
    ctx: WorkerContext, key: str, body: str, event: str, comments: list[dict[str, Any]]
) -> PostedReview:
    """POST the review under ``key``'s marker; when GitHub's answer is lost (5xx, timeout), the
    bot's own marker on GitHub decides: found means posted, missing means one more POST."""
    for attempt in (1, 2):
        try:
            posted = await _create(ctx, key, body, event, comments)
            break
        except (GitHubApiError, GitHubUnavailable) as exc:
            if not answer_lost(exc):
                raise
            log.warning("review %s: GitHub's answer was lost (%s); looking for it", key, exc)
            existing = await _marked_on_github(ctx, key)
            if existing is not None:
                posted = existing
                break
            if attempt == 2:
                raise
    review_id = int(posted.get("id") or 0)
    url = str(posted.get("html_url") or "")
    ctx.store.mark_review_posted(key, review_id, url)
    return PostedReview(review_id, url, len(comments), event)


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


def answer_lost(exc: Exception) -> bool:
    """Whether a failed write may still have been carried out: GitHub answered 5xx, or the answer
    never came (timeout, connection cut). A 4xx is a refusal; a missing token sent nothing."""
    if isinstance(exc, GitHubApiError):
        return exc.status >= 500
    return isinstance(exc, GitHubUnavailable) and not isinstance(exc, TokenRefused)


async def _marked_on_github(ctx: WorkerContext, key: str) -> Mapping[str, Any] | None:
    task = ctx.task
    assert task.number is not None
    reviews = await ctx.gateway.list_reviews(task.repo, task.number)
    return find_marked(reviews, key, ctx.bot_login)


def _adopt(ctx: WorkerContext, key: str, existing: Mapping[str, Any], event: str) -> PostedReview:
    review_id = int(existing.get("id") or 0)
    url = str(existing.get("html_url") or "")
    if ctx.store.get_review_key(key) is None:
        ctx.store.claim_review_key(key, ctx.worker_id)
    ctx.store.mark_review_posted(key, review_id, url)
    return PostedReview(review_id, url, 0, event, already_posted=True)
