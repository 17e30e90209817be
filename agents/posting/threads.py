"""The bot's earlier findings on a pull request, their threads, and closing the fixed ones.

Read back from GitHub, never from what the model says: the PR's review comments that carry the
bot's own finding marker (only the verified login's count), each with the lines and commit the
marker names; whether each thread is resolved (GraphQL, the only place GitHub says); and how
the lines moved from each of those commits to the head (``compare``). A fixed finding's thread
gets a one-line reply naming the commit, written once under a store claim and the bot's marker,
like every write: "Resolved" when it was resolved, "Fixed at" when it stays open. The worker's
own token never resolves (GitHub wants Contents: write for it, above a reviewer's ceiling):
``WorkerContext.resolve_threads`` does, where the operator opted in and the App may
(``agents.identity.resolution``). A thread the bot resolved before and finds open again was
reopened by a person, and is left to them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agents.posting.keys import find_own_comment, thread_key, with_comment_marker
from agents.posting.lines import Moves, moves_of
from agents.posting.once import Written, task_number, worker_writes_once
from agents.posting.render import (
    PostedFinding,
    fixed_reply,
    posted_finding,
    resolution_reply,
    says_fixed_not_resolved,
)
from agents.posting.selection import ThreadState

if TYPE_CHECKING:
    from agents.tools.context import WorkerContext


@dataclass
class Earlier:
    """What the bot posted on the PR before this review, as GitHub shows it now."""

    comments: list[dict[str, Any]] = field(default_factory=list)
    findings: list[PostedFinding] = field(default_factory=list)
    threads: dict[int, ThreadState] = field(default_factory=dict)
    moves: dict[str, Moves] = field(default_factory=dict)

    def moves_of(self, sha: str) -> Moves:
        return self.moves.get(sha, Moves())


async def read_earlier(
    ctx: WorkerContext, *, bot_reviewed: bool | None, with_threads: bool = True
) -> Earlier:
    """The bot's posted findings on the task's PR, how their lines moved to the head, and (with
    ``with_threads``, when any were posted at another commit) their threads' states.
    ``bot_reviewed``: whether discovery saw a review of the bot's on the PR (None: unknown)."""
    task = ctx.task
    repo, number, head = task.repo, task_number(ctx), task.head_sha or ""
    if bot_reviewed is False:
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
        ours = find_own_comment(_replies(comments, root), key, ctx.bot_login)
        resolved = bool(thread.get("isResolved"))
        left = ours is not None and not resolved and says_fixed_not_resolved(str(ours["body"]))
        reopened = ours is not None and not resolved and not left
        states[root] = ThreadState(str(thread["id"]), resolved, reopened, fixed_open=left)
    return states


def _replies(comments: Sequence[Mapping[str, Any]], root: int) -> list[Mapping[str, Any]]:
    return [c for c in comments if c.get("in_reply_to_id") == root]


@dataclass
class Closed:
    """What became of the fixed findings' threads: resolved, or left open with a reply."""

    resolved: list[PostedFinding] = field(default_factory=list)
    left_open: list[PostedFinding] = field(default_factory=list)


async def resolve_fixed(
    ctx: WorkerContext, earlier: Earlier, fixed: Sequence[PostedFinding]
) -> Closed:
    """Resolve each fixed finding's thread where it may be (one token for all of them), and
    reply once in each: "Resolved" or "Fixed at <sha>". Nothing counts as resolved unless
    GitHub said it is."""
    nodes = {p.comment_id: t.node_id for p in fixed if (t := earlier.threads.get(p.comment_id))}
    done: set[str] = set()
    if nodes and ctx.resolve_threads is not None:
        done = await ctx.resolve_threads(ctx.task.repo, sorted(set(nodes.values())))
    closed = Closed()
    for posted in fixed:
        node = nodes.get(posted.comment_id)
        if node is None:
            continue
        resolved = node in done
        written = await _reply_once(ctx, posted, resolved=resolved)
        if written.held_by is None:
            (closed.resolved if resolved else closed.left_open).append(posted)
    return closed


async def _reply_once(ctx: WorkerContext, posted: PostedFinding, *, resolved: bool) -> Written:
    task = ctx.task
    number, head = task_number(ctx), task.head_sha or ""
    root = posted.comment_id
    key = thread_key(task.repo, number, root, "resolved")
    said = resolution_reply(head) if resolved else fixed_reply(head)
    # Called after the resolution: a "Resolved" reply on an open thread would read as "reopened".
    return await reply_once_in_thread(ctx, number, root, key, said, f"resolution {key}")


async def reply_once_in_thread(
    ctx: WorkerContext, number: int, root: int, key: str, text: str, what: str
) -> Written:
    """The worker's one reply under ``key`` in the review thread that starts at comment ``root``
    of pull request ``number``: the store's claim, then the bot's own marker among that thread's
    replies, then the write. Every answer the bot gives in a thread (a fixed finding, a
    responder's answer, a fix round's answer) is written through here."""
    repo = ctx.task.repo
    body = with_comment_marker(text, key)

    async def find() -> Mapping[str, Any] | None:
        comments = await ctx.gateway.list_pull_review_comments(repo, number)
        return find_own_comment(_replies(comments, root), key, ctx.bot_login)

    async def create() -> Mapping[str, Any]:
        return await ctx.gateway.reply_to_review_comment(repo, number, root, body)

    return await worker_writes_once(ctx, key, find, create, what)
