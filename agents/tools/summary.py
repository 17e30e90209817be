"""The bot's one summary comment on a pull request: created once, then edited in place.

Written after the review it summarises, with its final text: the first review of a PR creates it
through the exactly-once write path (a store claim on :func:`agents.posting.keys.summary_key` and
the bot's own hidden marker in the comment), so a retried or concurrent review finds it instead of
posting a second one; every later review edits that same comment (an edit is idempotent: the same
text twice is the same comment). A summary someone deleted is written again, and recorded under the
same key.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from agents.github.errors import GitHubApiError
from agents.posting.keys import find_own_comment, summary_key, with_comment_marker
from agents.posting.once import Written, answered, create_or_find
from agents.tools.context import WorkerContext
from agents.tools.pull_files import snapshot, task_number
from agents.tools.review import worker_writes_once

log = logging.getLogger("swarm.review")


async def ensure_summary(ctx: WorkerContext, body: str) -> Written:
    """The PR's summary comment: created with ``body`` if it does not exist yet (else left
    alone: :func:`edit_summary` brings it up to date); ``held_by`` when another live worker is
    creating it at this moment."""
    repo, number = ctx.task.repo, task_number(ctx)
    key = summary_key(repo, number)
    marked = with_comment_marker(body, key)

    async def find() -> Mapping[str, Any] | None:
        return await _find(ctx, key)

    async def create() -> Mapping[str, Any]:
        return await create_or_find(
            lambda: ctx.gateway.create_issue_comment(repo, number, marked), find, f"summary {key}"
        )

    # A summary is written only after a review of the bot's: a PR that had none when discovery
    # read it this run has no summary to find (a claim of another writer is still looked up).
    first = answered(None) if snapshot(ctx).reviewed_by(ctx.bot_login) is False else None
    return await worker_writes_once(ctx, key, find, create, first)


async def known_summary_url(ctx: WorkerContext) -> str | None:
    """The summary's URL as the store recorded it when it was written (None: not written yet,
    or its URL unknown); no GitHub call."""
    known = await asyncio.to_thread(
        ctx.store.get_review_key, summary_key(ctx.task.repo, task_number(ctx))
    )
    if known is None or known.state != "posted":
        return None
    return known.review_url or None


async def edit_summary(ctx: WorkerContext, written: Written, body: str) -> str | None:
    """Bring the summary up to date with ``body``; its URL (None when there is none to edit:
    another worker was creating it and it is still not there)."""
    repo, number = ctx.task.repo, task_number(ctx)
    key = summary_key(repo, number)
    marked = with_comment_marker(body, key)
    target: Mapping[str, Any] | None = None
    if written.id:
        target = {"id": written.id, "html_url": written.url}
    else:
        target = await _find(ctx, key)
    if target is None:
        log.info("%s: the summary is being created by another worker; not edited", key)
        return None
    try:
        edited = await ctx.gateway.update_issue_comment(repo, int(target["id"]), marked)
    except GitHubApiError as exc:
        if exc.status != 404:
            raise
        # Deleted by someone (or a GitHub that never had it): the PR still gets its summary.
        edited = await ctx.gateway.create_issue_comment(repo, number, marked)
        await asyncio.to_thread(
            ctx.store.mark_review_posted,
            key,
            int(edited.get("id") or 0),
            str(edited.get("html_url") or ""),
        )
    return str(edited.get("html_url") or target.get("html_url") or "") or None


async def _find(ctx: WorkerContext, key: str) -> Mapping[str, Any] | None:
    comments = await ctx.gateway.list_issue_comments(ctx.task.repo, task_number(ctx))
    return find_own_comment(comments, key, ctx.bot_login)
