"""A review as the product posts it, from the findings the model reported as data.

1. read what the bot posted on the PR before (:mod:`agents.tools.threads`) and select
   (:mod:`agents.posting.selection`): the same finding once, the repository's threshold and
   cap, the diff's anchors (:mod:`agents.tools.anchors`);
2. post the review, exactly once per head and role (:mod:`agents.tools.review`): only the
   inline findings, rendered by :mod:`agents.posting.render`, and a one-line pointer;
3. resolve the threads of earlier findings the push fixed;
4. write the summary once, after the review (created on a PR's first review, edited on the
   next, :mod:`agents.tools.summary`): what changed, open findings by severity with their
   links, what folded and why, files not reviewed, cost and tokens.

Steps 3 and 4 come after the review is on GitHub: before posting it, what they need is kept
on the review's key in the store (:class:`AfterReview`) and dropped once they are done, so a
run interrupted in between leaves them to the next run, which does them from that record
(:func:`finish_review`) without asking the model again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel, ConfigDict

from agents.posting.findings import Finding
from agents.posting.keys import review_key
from agents.posting.render import (
    Listed,
    PostedFinding,
    SummaryView,
    diff_line_url,
    inline_comment,
    mark_of,
    review_pointer,
    summary_body,
)
from agents.posting.selection import Selection, resolvable, select
from agents.tools.anchors import anchors_of, placement
from agents.tools.context import PostedReview, WorkerContext
from agents.tools.pull_files import pr_files, pr_patches
from agents.tools.review import holder_alive, post_once, task_write_key
from agents.tools.summary import edit_summary, ensure_summary, known_summary_url
from agents.tools.threads import Earlier, read_earlier, resolve_fixed
from agents.work import ListedFile, Spend


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


async def plan(
    ctx: WorkerContext, findings: Sequence[Finding], *, posted_in: int | None = None
) -> tuple[Earlier, Selection]:
    """What the bot posted before, and the selection of ``findings`` against it. ``posted_in``:
    the review this selection was posted in already (finishing it), whose comments are not
    "before" it."""
    task = ctx.task
    head = task.head_sha or ""
    patches = await pr_patches(ctx)
    anchors = {path: anchors_of(patch) for path, patch in patches.items()}
    earlier = await read_earlier(ctx, with_threads=not ctx.dry_run)
    if posted_in is not None:
        own = {
            c.get("id") for c in earlier.comments if c.get("pull_request_review_id") == posted_in
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


async def publish_review(
    ctx: WorkerContext, *, what_changed: str, findings: Sequence[Finding], event: str
) -> Published:
    task = ctx.task
    head = task.head_sha or ""
    earlier, chosen = await plan(ctx, findings)
    comments = [inline_comment(f, where, head) for f, where in chosen.inline]
    fixed = resolvable(earlier.findings, earlier.threads, findings, earlier.moves_of, head)
    spent = ctx.spend().plus(task.spent_before)
    view = await _view(ctx, what_changed, chosen, earlier, fixed, None, spent)
    if ctx.dry_run:
        preview = _preview(event, comments, summary_body(view))
        return Published(None, chosen, preview=preview)
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
    noted = await _note(ctx, key, rest)
    review = await post_once(
        ctx,
        body=review_pointer(await known_summary_url(ctx), len(comments)),
        event=event,
        comments=comments,
    )
    if not noted:
        await _note(ctx, key, rest)  # claimed inside post_once (no claim ahead): kept now
    return await _after_review(ctx, key, rest, (earlier, chosen, fixed), review)


async def finish_review(ctx: WorkerContext) -> Published | None:
    """What an interrupted worker left after posting this task's review (the fixed threads'
    replies, the summary), done from the record it kept (no model call); None when nothing is
    left. Each of those writes is once-only on its own, so finishing twice writes nothing new."""
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
    rest = AfterReview.model_validate(known.unfinished)
    earlier, chosen = await plan(ctx, rest.findings, posted_in=known.review_id)
    fixed = [p for p in earlier.findings if p.comment_id in set(rest.fixed)]
    review = PostedReview(known.review_id, known.review_url, 0, rest.event, already_posted=True)
    return await _after_review(ctx, key, rest, (earlier, chosen, fixed), review)


async def _note(ctx: WorkerContext, key: str, rest: AfterReview) -> bool:
    return await asyncio.to_thread(
        ctx.store.note_unfinished, key, ctx.worker_id, rest.model_dump(mode="json")
    )


async def _after_review(
    ctx: WorkerContext,
    key: str,
    rest: AfterReview,
    planned: tuple[Earlier, Selection, Sequence[PostedFinding]],
    review: PostedReview,
) -> Published:
    """Steps 3 and 4, once the review is posted; then nothing is left for a next run."""
    earlier, chosen, fixed = planned
    closed = await resolve_fixed(ctx, earlier, fixed)
    # Written once, after the review, with its final text: a PR's first summary is one write,
    # not a placeholder and its edit (issue 23). Each new finding links its line in the diff,
    # where its comment shows, so GitHub is not asked for the comments it just took.
    view = await _view(
        ctx, rest.what_changed, chosen, earlier, closed.resolved, review.url, rest.spent
    )
    view = _with_fixed_open(view, closed.left_open)
    body = summary_body(view)
    summary = await ensure_summary(ctx, body)
    url = summary.url if summary.posted else await edit_summary(ctx, summary, body)
    await asyncio.to_thread(ctx.store.mark_finished, key)
    return Published(review, chosen, url or summary.url, closed.resolved, closed.left_open)


def _with_fixed_open(view: SummaryView, left_open: Sequence[PostedFinding]) -> SummaryView:
    """``view`` with the findings this push fixed whose threads stay open: listed as fixed,
    no longer among the open findings, and never as resolved."""
    if not left_open:
        return view
    urls = {p.url for p in left_open}
    still = [x for x in view.open_findings if x.url not in urls]
    fixed = [Listed(p.finding, p.url) for p in left_open]
    return replace(view, open_findings=still, fixed_open=fixed)


async def _view(
    ctx: WorkerContext,
    what_changed: str,
    chosen: Selection,
    earlier: Earlier,
    resolved: Sequence[PostedFinding],
    review_url: str | None,
    spend: Spend,
) -> SummaryView:
    """The summary's content: the findings still open on the PR (posted before and not
    resolved, and this review's), each linked to its comment (an earlier one) or its line in
    the diff (this review's)."""
    task = ctx.task
    gone = {p.comment_id for p in resolved}
    gone |= {root for root, t in earlier.threads.items() if t.resolved or t.fixed_open}
    listed: list[Listed] = []
    seen: set[str] = set()
    for p in earlier.findings:
        if p.comment_id in gone or p.mark.key in seen:
            continue
        seen.add(p.mark.key)
        listed.append(Listed(p.finding, p.url))
    for f, _where in chosen.inline:
        key = mark_of(f, task.head_sha or "").key
        if key not in seen:
            seen.add(key)
            listed.append(Listed(f, diff_line_url(review_url, f.path, f.line)))
    return SummaryView(
        head_sha=task.head_sha or "",
        review_url=review_url,
        what_changed=what_changed,
        areas=areas(await pr_files(ctx)),
        open_findings=listed,
        outside_diff=chosen.outside,
        below_threshold=chosen.below_counts(),
        min_severity=task.rules.min_severity,
        over_cap=len(chosen.over_cap),
        max_comments=task.rules.max_comments,
        resolved=[Listed(p.finding, p.url) for p in resolved],
        not_reviewed=not_reviewed(await pr_files(ctx), task.files, task.listed),
        cost_usd=spend.cost_usd,
        input_tokens=spend.input_tokens,
        output_tokens=spend.output_tokens,
        model_calls=spend.model_calls,
    )


def area_of(path: str) -> str:
    """The area a file belongs to: its first two folders (``src/widgets``), or the root."""
    folders = path.split("/")[:-1]
    return "/".join(folders[:2]) if folders else "(root)"


def areas(files: Sequence[dict[str, Any]]) -> list[tuple[str, int, int, int]]:
    """(area, files, additions, deletions) per area of the PR, largest change first."""
    totals: dict[str, list[int]] = {}
    for f in files:
        row = totals.setdefault(area_of(str(f.get("filename") or "")), [0, 0, 0])
        row[0] += 1
        row[1] += int(f.get("additions") or 0)
        row[2] += int(f.get("deletions") or 0)
    ordered = sorted(totals.items(), key=lambda kv: (-(kv[1][1] + kv[1][2]), kv[0]))
    return [(area, n, added, removed) for area, (n, added, removed) in ordered]


def not_reviewed(
    files: Sequence[dict[str, Any]], covered: Sequence[str], listed: Sequence[ListedFile] = ()
) -> list[tuple[str, str]]:
    """(path, why) for each file of the PR this review did not read a diff of: planning's
    reason for a listed file (generated, vendored, binary, a shard that did not finish...)."""
    wanted = set(covered)
    reasons = {item.path: item.reason for item in listed}
    out: list[tuple[str, str]] = []
    for f in files:
        name = str(f.get("filename") or "")
        if name in reasons:
            out.append((name, reasons[name]))
        elif wanted and name not in wanted:
            out.append((name, "excluded by the repository's path rules"))
        elif f.get("status") != "removed" and not isinstance(f.get("patch"), str):
            out.append((name, "no diff from GitHub (binary or too large)"))
    return out


def _preview(event: str, comments: Sequence[dict[str, Any]], summary: str) -> str:
    lines = [f"[{event}] " + review_pointer(None, len(comments))]
    lines += [f"  {c['path']}:{c['line']}: {c['body']}" for c in comments]
    return "\n".join([*lines, "", summary])
