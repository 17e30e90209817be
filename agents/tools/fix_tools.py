"""A fix round's two tools: read what blocks the pull request, and push the fix with an answer
in each finding's thread. The model asks; code decides what is read, committed and written.

``get_findings`` takes no argument: the findings were read from GitHub by code when the round
began (:mod:`agents.writer.fixing`), people's words first, and reach the model inside untrusted
delimiters: the reviewer read a PR author's code, and a person's words are data too.

``push_fix`` takes a commit title and one answer per finding's thread. Code checks the change set
against the protected paths and caps, commits it through ``createCommitOnBranch`` on the same
branch with the reviewed head as the expected head (one commit per round; none when nothing
changed), replies once in each finding's thread with the model's answer, and never resolves a
thread: the reviewer's own resolve-when-fixed closes what its re-review no longer finds. Then
the round's line (its commit, cost and turns) goes into the pull request's body, and the
round's key is recorded posted.
"""

from __future__ import annotations

import asyncio
import json
import logging

from pydantic import BaseModel, ConfigDict, Field

from agents.llm.turn import ToolResult
from agents.llm.untrusted import wrap_untrusted
from agents.posting.keys import inert
from agents.posting.threads import reply_once_in_thread
from agents.posting.writer import PostedReview, task_write_key
from agents.redact import redact
from agents.tools.base import OfferedTool, Tool, ToolError
from agents.tools.context import WorkerContext
from agents.tools.writer_tools import NoArgs, commit_changes
from agents.workspace.policy import ChangeRefused
from agents.writer.bench import WriterBench
from agents.writer.body import RoundLine, with_round
from agents.writer.fixing import FixRound
from agents.writer.rounds import answer_key

log = logging.getLogger("agents.writer")

MAX_ANSWER_CHARS = 4000


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    thread: int = Field(ge=1, description="the finding's thread, as get_findings names it")
    answer: str = Field(
        min_length=1, max_length=MAX_ANSWER_CHARS, description="what you did about it, or why not"
    )


class FixArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=3, max_length=120, description="the commit's one line")
    answers: list[Answer] = Field(default_factory=list, max_length=50)


def _answer_text(round_: FixRound, commit: str | None, said: str) -> str:
    """The writer's reply in a finding's thread: which round and commit, then the model's
    words, redacted and made inert (the request path sanitises mentions and markup)."""
    made = f"commit `{commit[:12]}`" if commit else "no commit"
    words = inert(redact(said)).strip()
    return f"Fix round {round_.number} ({made}): {words}"


def fix_tools(ctx: WorkerContext, bench: WriterBench, round_: FixRound) -> list[OfferedTool]:
    """The round's tools; their permissions are declared in :mod:`agents.tools.catalog`."""

    async def get_findings(_args: NoArgs) -> ToolResult:
        listed = [f.view() for f in round_.findings]
        text = json.dumps(listed, ensure_ascii=False, indent=1)
        head = (
            f"{len(listed)} finding(s) block pull request #{round_.pull} (round {round_.number}); "
            "answer each thread with push_fix"
        )
        data = wrap_untrusted("findings", redact(text), source=f"pull request #{round_.pull}")
        return ToolResult(f"{head}\n{data}", summary=head)

    async def push_fix(args: FixArgs) -> ToolResult:
        if round_.pushed:
            return ToolResult("this round's fix is pushed already", summary="pushed already")
        threads = {f.comment_id for f in round_.findings if f.comment_id}
        answers = {a.thread: a.answer for a in args.answers}
        unknown = sorted(set(answers) - threads)
        if unknown:
            raise ToolError(f"no finding of this round has thread(s) {unknown}")
        missing = sorted(threads - set(answers))
        if missing:
            raise ToolError(f"answer every finding's thread; missing: {missing}")
        try:
            changes = bench.workspace.final_changes()
        except ChangeRefused as exc:
            raise ToolError(redact(str(exc))) from None
        title = inert(" ".join(args.title.split()))
        if ctx.dry_run:
            ctx.preview = "\n".join(
                [f"commit: {title} ({len(changes.paths)} file(s))"]
                + [f"thread {t}: {_answer_text(round_, None, a)}" for t, a in answers.items()]
            )
            round_.pushed = True
            return ToolResult("dry run: nothing committed or answered", summary="dry run")
        # The round is the reviewed head's, whatever this session committed since: its answers'
        # keys name that head, so a push_fix tried again answers no thread twice.
        reviewed = ctx.task.head_sha or bench.head
        await commit_changes(
            ctx, bench, title, changes, f"For #{bench.issue}: fix round {round_.number}."
        )
        commit = bench.commits[-1] if bench.commits else None
        for thread, said in answers.items():
            await _answer_once(ctx, round_, reviewed, thread, _answer_text(round_, commit, said))
            if thread not in round_.answered:
                round_.answered.append(thread)
        spent = ctx.spend()
        line = RoundLine(
            round_.number,
            reviewed,
            commit,
            len(answers) or len(round_.findings),
            spent.cost_usd,
            spent.model_calls,
        )
        await _round_in_body(ctx, round_, line)
        await _settle(ctx, round_, commit)
        round_.pushed = True
        made = f"pushed {commit[:12]}" if commit else "nothing to commit"
        log.info("fix round %d on #%d: %s", round_.number, round_.pull, made)
        return ToolResult(
            f"{made}; answered {len(answers)} thread(s). Stop here: the reviewer re-reviews.",
            summary=made,
        )

    return [
        Tool(
            "get_findings",
            "Read what blocks your pull request: a person's words first, then the reviewer "
            "bot's findings at or above the repository's blocking severity, each with its "
            "thread.",
            NoArgs,
            get_findings,
        ),
        Tool(
            "push_fix",
            "Commit the working copy's changes to your pull request's branch (one commit) and "
            "answer every finding's thread with what you did about it, or why not. Call it "
            "once, when you are done; it never resolves a thread.",
            FixArgs,
            push_fix,
        ),
    ]


async def _answer_once(
    ctx: WorkerContext, round_: FixRound, head: str, thread: int, text: str
) -> None:
    key = answer_key(ctx.task.repo, round_.pull, ctx.role_id, head, thread)
    await reply_once_in_thread(ctx, round_.pull, thread, key, text, f"fix answer {key}")


async def _round_in_body(ctx: WorkerContext, round_: FixRound, line: RoundLine) -> None:
    from agents.github.drafts import update_body

    repo, number = ctx.task.repo, round_.pull
    now = await ctx.gateway.get_pull(repo, number)
    body = str(now.get("body") or "")
    await update_body(ctx.gateway, repo, number, with_round(body, line))


async def _settle(ctx: WorkerContext, round_: FixRound, commit: str | None) -> None:
    """Record the round as done: its key posted, naming the commit (or the pull request)."""
    key = task_write_key(ctx)
    url = round_.url
    if commit:
        url = f"{round_.url.split('/pull/', 1)[0]}/commit/{commit}" if "/pull/" in url else url
    if key is not None:
        store = ctx.store
        if await asyncio.to_thread(store.get_review_key, key) is None:
            await asyncio.to_thread(store.claim_review_key, key, ctx.worker_id)
        await asyncio.to_thread(store.mark_review_posted, key, round_.pull, url)
    ctx.review = PostedReview(round_.pull, round_.url, len(round_.answered), "fix")


__all__ = ["fix_tools"]
