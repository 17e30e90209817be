"""The responder's tools: read the bot's thread a person replied in, and answer in it once.

The thread, its finding and the person's reply come from GitHub, never from the model: the
reply to answer is the task's (the dispatcher's word), the thread is the one it is in, and only
a thread the bot's own verified login started with a finding counts. Everything people wrote is
quoted as untrusted data; the answer is plain text the product posts in the same thread, through
the same sanitised, redacted, exactly-once path as every write (one answer per reply, whatever
retries or runs at the same moment do).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from agents.llm.turn import ToolResult
from agents.llm.untrusted import wrap_untrusted
from agents.memory.feedback import WRITE_PERMISSIONS
from agents.posting.keys import answer_key
from agents.posting.lines import moves_of
from agents.posting.once import Written, task_number
from agents.posting.render import PostedFinding, answer_body, posted_finding
from agents.posting.threads import reply_once_in_thread
from agents.tools.base import OfferedTool, Tool, ToolError
from agents.tools.context import WorkerContext
from agents.tools.github_tools import TargetArgs, check_target

CONTEXT_LINES = 3
ANSWER_CHARS = 4000


class AnswerArgs(TargetArgs):
    body: str = Field(
        min_length=1, max_length=ANSWER_CHARS, description="the answer, plain text, no markup"
    )


@dataclass(frozen=True)
class Thread:
    """The bot's finding thread the task's reply is in, read from GitHub."""

    root: Mapping[str, Any]
    finding: PostedFinding
    comments: Sequence[Mapping[str, Any]]  # the root, then the replies, oldest first
    reply: Mapping[str, Any]


async def read_thread(ctx: WorkerContext) -> Thread:
    """The task's reply and its thread; a ToolError when it is not a reply in a finding thread
    the bot started."""
    task = ctx.task
    number = task_number(ctx)
    if task.reply_to is None:
        raise ToolError("this task names no reply to answer")
    comments = await ctx.gateway.list_pull_review_comments(task.repo, number)
    reply = next((c for c in comments if c.get("id") == task.reply_to), None)
    root_id = (reply or {}).get("in_reply_to_id")
    root = next((c for c in comments if c.get("id") == root_id), None)
    finding = posted_finding(root, ctx.bot_login) if root is not None else None
    if reply is None or root is None or finding is None:
        raise ToolError(f"comment {task.reply_to} is not a reply in a thread this bot started")
    replies = sorted(
        (c for c in comments if c.get("in_reply_to_id") == root_id),
        key=lambda c: (str(c.get("created_at") or ""), int(c.get("id") or 0)),
    )
    return Thread(root, finding, [root, *replies], reply)


async def lines_at_head(ctx: WorkerContext, finding: PostedFinding) -> dict[str, Any]:
    """The finding's lines as they are at the task's head (followed through the diff since the
    finding was posted), with a few lines around them, numbered."""
    task = ctx.task
    head = task.head_sha or ""
    path, (first, last) = finding.finding.path, finding.lines
    changed = False
    if finding.mark.sha != head:
        compared = await ctx.gateway.compare(task.repo, finding.mark.sha, head)
        moved = moves_of(compared.get("files") or []).of(path)
        if moved.gone:
            return {"path": path, "note": "the file is gone at the head"}
        path = moved.new_path or path
        followed = moved.follow(first, last)
        changed = followed is None
        first, last = followed or moved.region(first, last)
    text = await ctx.gateway.get_file(task.repo, path, head or None)
    lines = text.splitlines()
    low, high = max(1, first - CONTEXT_LINES), min(len(lines), last + CONTEXT_LINES)
    return {
        "path": path,
        "first": first,
        "last": last,
        "changed_since_the_finding": changed,
        "text": "\n".join(f"{n:>5}  {lines[n - 1]}" for n in range(low, high + 1)),
    }


def _speaker(comment: Mapping[str, Any]) -> str:
    return str((comment.get("user") or {}).get("login") or "")


def reply_tools(ctx: WorkerContext) -> list[OfferedTool]:
    async def get_thread(args: TargetArgs) -> ToolResult:
        check_target(ctx, args)
        thread = await read_thread(ctx)
        f = thread.finding.finding
        view = {
            "finding": {
                "path": f.path,
                "start_line": f.first_line,
                "line": f.line,
                "severity": f.severity,
                "category": f.category,
                "message": f.message,
                "posted_at_commit": thread.finding.mark.sha,
            },
            "lines_at_head": await lines_at_head(ctx, thread.finding),
            "thread": [
                {
                    "id": c.get("id"),
                    "author": _speaker(c),
                    "text": str(c.get("body") or "") if c is not thread.root else f.message,
                    "to_answer": c is thread.reply,
                }
                for c in thread.comments
            ],
        }
        text = json.dumps(view, indent=1, ensure_ascii=False)
        source = f"{ctx.task.repo}#{ctx.task.number} thread {thread.root.get('id')}"
        return ToolResult(wrap_untrusted("review_thread", text, source=source), summary="thread")

    async def reply_in_thread(args: AnswerArgs) -> ToolResult:
        check_target(ctx, args)
        if ctx.comments_posted:
            raise ToolError("this worker already answered the reply")
        thread = await read_thread(ctx)
        asker = _speaker(thread.reply)
        permission = await ctx.gateway.collaborator_permission(ctx.task.repo, asker)
        if permission not in WRITE_PERMISSIONS:
            raise ToolError(f"{asker} has {permission} access: only writers get answers")
        if ctx.dry_run:
            ctx.preview, ctx.comments_posted = args.body, 1
            return ToolResult("dry run: the answer was not posted")
        written = await _answer_once(ctx, thread, args.body)
        ctx.comments_posted = 1
        if written.held_by is not None:
            raise ToolError(f"worker {written.held_by} is answering this reply now")
        if written.already:
            return ToolResult(f"this reply was already answered: {written.url or '(posted)'}")
        return ToolResult(f"answer posted: {written.url}")

    return [
        Tool(
            "get_thread",
            "Read the review thread to answer: your finding, its lines at the head, and the "
            "conversation (the reply to answer is marked).",
            TargetArgs,
            get_thread,
        ),
        Tool(
            "reply_in_thread",
            "Post your one answer to the reply, in the same thread, as plain text.",
            AnswerArgs,
            reply_in_thread,
        ),
    ]


async def _answer_once(ctx: WorkerContext, thread: Thread, text: str) -> Written:
    task = ctx.task
    number = task_number(ctx)
    assert task.reply_to is not None
    key = answer_key(task.repo, number, task.reply_to)
    root = int(thread.root["id"])
    return await reply_once_in_thread(ctx, number, root, key, answer_body(text), f"answer {key}")
