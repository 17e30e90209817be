"""Posting the triager's single comment on an issue exactly once, whichever worker posts it.

The comment's key names the issue and the role, not the worker: two triage runs of one issue at
the same moment (an ``issues`` webhook and a scheduled run, or a redelivery to a second
receiver) claim the same key in the store, and only the winner posts. The comment carries the
key in a hidden marker, so a comment GitHub accepted while the store never heard of it (a lost
answer, a crash, a fresh store) is found among the bot's own comments instead of posted again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agents.posting.keys import comment_key, find_own_comment, with_comment_marker
from agents.posting.once import Written, worker_writes_once

if TYPE_CHECKING:
    from agents.tools.context import WorkerContext


async def post_comment_once(ctx: WorkerContext, number: int, body: str) -> Written:
    repo = ctx.task.repo
    key = comment_key(repo, number, ctx.role_id)
    marked = with_comment_marker(body, key)

    async def find() -> Mapping[str, Any] | None:
        comments = await ctx.gateway.list_issue_comments(repo, number)
        return find_own_comment(comments, key, ctx.bot_login)

    async def create() -> Mapping[str, Any]:
        return await ctx.gateway.create_issue_comment(repo, number, marked)

    return await worker_writes_once(ctx, key, find, create, f"comment {key}")
