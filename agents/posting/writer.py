"""A review as the product posts it, from the findings the model reported as data: one
:class:`ReviewWriter` per worker, which the tools call into and which never calls back into them.

1. read what the bot posted on the PR before (:mod:`agents.posting.threads`) and select
   (:mod:`agents.posting.selection`): the same finding once, the repository's threshold and
   cap, the diff's anchors (:mod:`agents.posting.anchors`);
2. post the review, exactly once per head and role (:meth:`ReviewWriter.post`, under
   :mod:`agents.posting.once`): only the inline findings, rendered by
   :mod:`agents.posting.render`, and a one-line pointer;
3. resolve the threads of earlier findings the push fixed;
4. write the summary once, after the review (created on a PR's first review, edited on the
   next, :mod:`agents.posting.summary`): what changed, open findings by severity with their
   links, what folded and why, files not reviewed, cost and tokens.

Exactly once, per review: an idempotency key claimed atomically in the store, and a hidden marker
in the review body that is looked for among the PR's existing reviews before posting. The marker
catches the one case the key cannot: a worker that crashed after GitHub accepted its review but
before the store recorded it.

Steps 3 and 4 come after the review is on GitHub: before posting it, what they need is kept
on the review's key in the store (:class:`AfterReview`) and dropped once they are done, so a
run interrupted in between leaves them to the next run, which does them from that record
(:meth:`ReviewWriter.finish`) without asking the model again.

What the writer reads of the PR comes in a :class:`~agents.github.pull_snapshots.PullSnapshot`
that the tools build from their reads (``agents.tools.pull_files.pull_view``): its reviews are
what discovery saw of the PR this run (whether the bot reviewed it, and the marker check), its
files the whole PR's as GitHub lists them (the patches comments anchor to, the summary's
areas). So the write path runs tools -> posting -> GitHub only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from agents.github.pull_snapshots import PullSnapshot
from agents.posting.anchors import anchors_of, placement
from agents.posting.findings import Finding
from agents.posting.keys import answer_key, find_marked, review_key, with_marker
from agents.posting.once import (
    Find,
    PostingRefused,
    Written,
    answered,
    claim_ahead,
    holder_alive,
    worker_writes_once,
)
from agents.posting.render import (
    PostedFinding,
    inline_comment,
    review_pointer,
    summary_body,
)
from agents.posting.selection import Selection, resolvable, select
from agents.posting.summary import (
    edit_summary,
    ensure_summary,
    known_summary_url,
    preview,
    summary_view,
    with_fixed_open,
)
from agents.posting.threads import Earlier, read_earlier, resolve_fixed
from agents.work import Spend

if TYPE_CHECKING:
    from agents.tools.context import WorkerContext

RERUN_NOTE = "**Re-review** (requested again at a head commit already reviewed)."


class ReviewInProgress(PostingRefused):
    """Another live worker holds this review's key; this one must not post a second review."""


@dataclass
class PostedReview:
    review_id: int | None
    url: str | None
    comments: int
    event: str
    already_posted: bool = False


@dataclass
class Published:
    """What the review did: the review, the selection, the summary's link, what it resolved."""

    review: PostedReview | None
    selection: Selection
    summary_url: str | None = None
    resolved: list[PostedFinding] = field(default_factory=list)
    # Fixed by the push, their threads left open with a "fixed at" reply (never "resolved").
    fixed_open: list[PostedFinding] = field(default_factory=list)
    preview: str | None = None


class AfterReview(BaseModel):
    """What a review's worker does after the review is posted needs, kept on the review's key
    until it is done: the model's account of the change and its findings (the selection is
    made again from them), the threads found fixed before posting (their root comments), and
    what the review cost until then (the summary's cost line)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    what_changed: str
    event: str
    findings: list[Finding]
    fixed: list[int]
    spent: Spend


@dataclass(frozen=True)
class Left:
    """A review an interrupted worker posted, and what it left undone after it."""

    key: str
    rest: AfterReview
    review: PostedReview


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


class ReviewWriter:
    """One worker's review writes: claim ahead, select, post once, resolve, summarize."""

    def __init__(self, ctx: WorkerContext, pull: PullSnapshot | None = None) -> None:
        self.ctx = ctx
        self.pull = pull or PullSnapshot()

    @property
    def bot_reviewed(self) -> bool | None:
        return self.pull.reviewed_by(self.ctx.bot_login)

    async def claim(self) -> Written | None:
        """Before the first model call: claim this task's write key (its review, or its
        answer), so of two runs at once only one spends tokens on it. None when this worker
        holds the key (it goes on), else why not: written already (its URL, "" when unknown) or
        another live worker writing it now (``held_by``).

        Shards post nothing and dry runs never look: both do their work whatever was posted.
        """
        ctx = self.ctx
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

    async def publish(
        self, *, what_changed: str, findings: Sequence[Finding], event: str
    ) -> Published:
        """Steps 1 to 4 for the model's findings (a dry run: the preview of what it would post)."""
        ctx = self.ctx
        task = ctx.task
        head = task.head_sha or ""
        earlier, chosen = await self.plan(findings)
        comments = [inline_comment(f, where, head) for f, where in chosen.inline]
        fixed = resolvable(earlier.findings, earlier.threads, findings, earlier.moves_of, head)
        spent = ctx.spend().plus(task.spent_before)
        if ctx.dry_run:
            files = self.pull.files or ()
            view = summary_view(task, files, what_changed, chosen, earlier, fixed, None, spent)
            return Published(None, chosen, preview=preview(event, comments, summary_body(view)))
        assert task.number is not None and task.head_sha is not None
        key = review_key(task.repo, task.number, task.head_sha, ctx.role_id, task.rerun)
        rest = AfterReview(
            what_changed=what_changed,
            event=event,
            findings=list(findings),
            fixed=[p.comment_id for p in fixed],
            spent=spent,
        )
        # Kept before the review is posted, on the claim this worker holds: an interrupt between
        # the review and the summary then leaves a record of what is left, never a bare review.
        noted = await self._note(key, rest)
        review = await self.post(
            body=review_pointer(await known_summary_url(ctx), len(comments)),
            event=event,
            comments=comments,
        )
        if not noted:
            await self._note(key, rest)  # claimed inside post (no claim ahead): kept now
        return await self._after_review(key, rest, (earlier, chosen, fixed), review)

    async def left(self) -> Left | None:
        """What an interrupted worker left after posting this task's review (the fixed threads'
        replies, the summary), as the store kept it; None when nothing is left. Asks no GitHub:
        the files :meth:`finish` needs are read only when something is left."""
        ctx = self.ctx
        key = task_write_key(ctx)
        if key is None:
            return None
        known = await asyncio.to_thread(ctx.store.get_review_key, key)
        if known is None or known.state != "posted" or not known.unfinished:
            return None
        if known.worker_id != ctx.worker_id and await asyncio.to_thread(holder_alive, ctx, known):
            # Not left: its worker is still at it (a webhook's review between its review and its
            # summary when a `swarm run` arrives). The review is there; the summary is its worker's.
            return None
        review = PostedReview(known.review_id, known.review_url, 0, "", already_posted=True)
        return Left(key, AfterReview.model_validate(known.unfinished), review)

    async def finish(self, left: Left, pull: PullSnapshot) -> Published:
        """Do what :meth:`left` found, from the record (no model call), with what the tools
        read of the PR (``pull``). Each of those writes is once-only on its own, so finishing
        twice writes nothing new."""
        self.pull = pull
        rest = left.rest
        earlier, chosen = await self.plan(rest.findings, posted_in=left.review.review_id)
        fixed = [p for p in earlier.findings if p.comment_id in set(rest.fixed)]
        review = replace(left.review, event=rest.event)
        return await self._after_review(left.key, rest, (earlier, chosen, fixed), review)

    async def plan(
        self, findings: Sequence[Finding], *, posted_in: int | None = None
    ) -> tuple[Earlier, Selection]:
        """What the bot posted before, and the selection of ``findings`` against it.
        ``posted_in``: the review this selection was posted in already (finishing it), whose
        comments are not "before" it."""
        ctx = self.ctx
        task = ctx.task
        head = task.head_sha or ""
        anchors = {path: anchors_of(patch) for path, patch in self.pull.patches().items()}
        earlier = await read_earlier(
            ctx, bot_reviewed=self.bot_reviewed, with_threads=not ctx.dry_run
        )
        if posted_in is not None:
            own = {
                c.get("id")
                for c in earlier.comments
                if c.get("pull_request_review_id") == posted_in
            }
            earlier.findings = [p for p in earlier.findings if p.comment_id not in own]
        chosen = select(
            findings,
            place=lambda f: placement(f, anchors.get(f.path)),
            min_severity=task.rules.min_severity,
            max_comments=task.rules.max_comments,
            earlier=earlier.findings,
            moves_of=earlier.moves_of,
            head=head,
        )
        return earlier, chosen

    async def post(self, *, body: str, event: str, comments: list[dict[str, Any]]) -> PostedReview:
        """Post the worker's single review, or report the one already posted for this key."""
        task = self.ctx.task
        assert task.number is not None and task.head_sha is not None
        key = review_key(task.repo, task.number, task.head_sha, self.ctx.role_id, task.rerun)
        if task.rerun:
            body = f"{RERUN_NOTE}\n\n{body}"

        async def find() -> Mapping[str, Any] | None:
            return await self._marked_on_github(key)

        async def create() -> Mapping[str, Any]:
            return await self._create(key, body, event, comments)

        first = self._found_by_discovery(key)
        written = await worker_writes_once(self.ctx, key, find, create, f"review {key}", first)
        if written.held_by is not None:
            raise ReviewInProgress(f"worker {written.held_by} is posting this review now")
        if written.already:
            return PostedReview(written.id, written.url, 0, event, already_posted=True)
        return PostedReview(written.id, written.url, len(comments), event)

    async def _create(
        self, key: str, body: str, event: str, comments: list[dict[str, Any]]
    ) -> Mapping[str, Any]:
        task = self.ctx.task
        assert task.number is not None
        return await self.ctx.gateway.create_review(
            task.repo,
            task.number,
            with_marker(body, key),
            event=event,
            commit_id=task.head_sha,
            comments=comments or None,
        )

    def _found_by_discovery(self, key: str) -> Find | None:
        """The marker check discovery made this run, when it still holds: this worker claimed
        the key from nobody (no earlier attempt can have posted it since discovery read the
        reviews)."""
        reviews = self.pull.reviews
        if not self.ctx.claimed_fresh or reviews is None:
            return None
        return answered(find_marked(reviews, key, self.ctx.bot_login))

    async def _marked_on_github(self, key: str) -> Mapping[str, Any] | None:
        task = self.ctx.task
        assert task.number is not None
        reviews = await self.ctx.gateway.list_reviews(task.repo, task.number)
        return find_marked(reviews, key, self.ctx.bot_login)

    async def _note(self, key: str, rest: AfterReview) -> bool:
        dumped = rest.model_dump(mode="json")
        return await asyncio.to_thread(
            self.ctx.store.note_unfinished, key, self.ctx.worker_id, dumped
        )

    async def _after_review(
        self,
        key: str,
        rest: AfterReview,
        planned: tuple[Earlier, Selection, Sequence[PostedFinding]],
        review: PostedReview,
    ) -> Published:
        """Steps 3 and 4, once the review is posted; then nothing is left for a next run."""
        ctx = self.ctx
        earlier, chosen, fixed = planned
        closed = await resolve_fixed(ctx, earlier, fixed)
        # Written once, after the review, with its final text: a PR's first summary is one
        # write, not a placeholder and its edit (issue 23). Each new finding links its line in
        # the diff, where its comment shows, so GitHub is not asked for the comments it just took.
        view = summary_view(
            ctx.task,
            self.pull.files or (),
            rest.what_changed,
            chosen,
            earlier,
            closed.resolved,
            review.url,
            rest.spent,
        )
        body = summary_body(with_fixed_open(view, closed.left_open))
        summary = await ensure_summary(ctx, body, bot_reviewed=self.bot_reviewed)
        url = summary.url if summary.posted else await edit_summary(ctx, summary, body)
        await asyncio.to_thread(ctx.store.mark_finished, key)
        return Published(review, chosen, url or summary.url, closed.resolved, closed.left_open)
