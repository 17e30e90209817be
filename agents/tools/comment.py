"""Posting a worker's single issue comment once, even when GitHub's answer to the POST is lost.

The comment carries a hidden marker with the worker's comment key. After a 5xx or a timeout the
bot's own comments are searched for it before anything else: found means posted, missing means
one more POST under the same marker, never a second comment.
"""

from __future__ import annotations

import logging

from agents.github.errors import GitHubApiError, GitHubUnavailable
from agents.once import answer_lost
from agents.reviews import comment_key, find_own_comment, with_comment_marker
from agents.tools.context import WorkerContext

log = logging.getLogger("swarm.review")


async def post_comment_once(ctx: WorkerContext, number: int, body: str) -> None:
    repo = ctx.task.repo
    key = comment_key(repo, number, ctx.worker_id)
    marked = with_comment_marker(body, key)
    for attempt in (1, 2):
        try:
            await ctx.gateway.create_issue_comment(repo, number, marked)
            return
        except (GitHubApiError, GitHubUnavailable) as exc:
            if not answer_lost(exc):
                raise
            log.warning("comment %s: GitHub's answer was lost (%s); looking for it", key, exc)
            found = find_own_comment(
                await ctx.gateway.list_issue_comments(repo, number), key, ctx.bot_login
            )
            if found is not None:
                return
            if attempt == 2:
                raise
