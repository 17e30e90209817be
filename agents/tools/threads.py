"""The bot's earlier findings on a pull request, their threads, and closing the fixed ones.

Read back from GitHub, never from what the model says: the PR's review comments that carry the
bot's own finding marker (only the verified login's count), each with the lines and commit the
marker names; whether each thread is resolved (GraphQL, the only place GitHub says); and how
the lines moved from each of those commits to the head (``compare``). A thread the bot resolves
gets a one-line reply naming the commit, written once under a store claim and the bot's marker,
like every write; a thread the bot resolved before and finds open again was reopened by a person,
and is left to them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agents.posting.keys import find_own_comment, thread_key, with_comment_marker
from agents.posting.lines import Moves, moves_of
from agents.posting.once import Written, create_or_find
from agents.posting.render import PostedFinding, posted_finding, resolution_reply
from agents.posting.selection import ThreadState
from agents.tools.context import WorkerContext
from agents.tools.pull_files import snapshot, task_number
from agents.tools.review import worker_writes_once


@dataclass
class Earlier:
    """What the bot posted on the PR before this review, as GitHub shows it now."""

    comments: list[dict[str, Any]] = field(default_factory=list)
    findings: list[PostedFinding] = field(default_factory=list)
    threads: dict[int, ThreadState] = field(default_factory=dict)
    moves: dict[str, Moves] = field(default_factory=dict)

    def moves_of(self, sha: str) -> Moves:
        return self.moves.get(sha, Moves())


async def read_earlier(ctx: WorkerContext, *, with_threads: bool = True) -> Earlier:
    """The bot's posted findings on the task's PR, how their lines moved to the head, and (with
    ``with_threads``, when any were posted at another commit) their threads' states."""
    task = ctx.task
    repo, number, head = task.repo, task_number(ctx), task.head_sha or ""
    if snapshot(ctx).reviewed_by(ctx.bot_login) is False:
        # No review of the bot's on the PR when discovery read it: none of its comments either
        # (findings are posted in reviews; answers and resolutions go in their threads).
        return Earlier()
    comments = await ctx.gateway.list_pull_review_comments(repo, number)
    found = [p for c in comments if (p := posted_finding(c, ctx.bot_login)) is not None]
    earlier = Earlier(comments, found)
    for sha in sorted({p.mark.sha for p in found if p.mark.sha != head}):
        compared = await ctx.gateway.compare(repo, sha, head)
        earlier.moves[sha] = moves_of(compared.get("files") or [])
    if with_threads and earlier.moves:
        earlier.threads = await _thread_states(ctx, comments)
    return earlier


async def _thread_states(
    ctx: WorkerContext, comments: Sequence[Mapping[str, Any]]
) -> dict[int, ThreadState]:
    repo, number = ctx.task.repo, task_number(ctx)
    states: dict[int, ThreadState] = {}
    for thread in await ctx.gateway.list_review_threads(repo, number):
        first = ((thread.get("comments") or {}).get("nodes") or [{}])[0]
        root = int(first.get("databaseId") or 0)
        if not root or not thread.get("id"):
            continue
        key = thread_key(repo, number, root, "resolved")
        ours = find_own_comment(_replies(comments, root), key, ctx.bot_login) is not None
        resolved = bool(thread.get("isResolved"))
        states[root] = ThreadState(str(thread["id"]), resolved, reopened=ours and not resolved)
    return states


def _replies(comments: Sequence[Mapping[str, Any]], root: int) -> list[Mapping[str, Any]]:
    return [c for c in comments if c.get("in_reply_to_id") == root]


async def resolve_fixed(
    ctx: WorkerContext, earlier: Earlier, fixed: Sequence[PostedFinding]
) -> list[PostedFinding]:
    """Resolve each fixed finding's thread once, with the one-line reply; those resolved by
    this call or already before (a retried run), in order."""
    done: list[PostedFinding] = []
    for posted in fixed:
        thread = earlier.threads.get(posted.comment_id)
        if thread is None:
            continue
        written = await _resolve_once(ctx, posted, thread.node_id)
        if written.held_by is None:
            done.append(posted)
    return done


async def _resolve_once(ctx: WorkerContext, posted: PostedFinding, node_id: str) -> Written:
    task = ctx.task
    repo, number, head = task.repo, task_number(ctx), task.head_sha or ""
    root = posted.comment_id
    key = thread_key(repo, number, root, "resolved")
    body = with_comment_marker(resolution_reply(head), key)

    async def find() -> Mapping[str, Any] | None:
        comments = await ctx.gateway.list_pull_review_comments(repo, number)
        return find_own_comment(_replies(comments, root), key, ctx.bot_login)

    async def create() -> Mapping[str, Any]:
        # Resolved first: a reply without a resolution would read as "reopened" to the next run.
        await ctx.gateway.resolve_review_thread(node_id)
        return await create_or_find(
            lambda: ctx.gateway.reply_to_review_comment(repo, number, root, body),
            find,
            f"resolution {key}",
        )

    return await worker_writes_once(ctx, key, find, create)
