"""The bot's one summary comment on a pull request: created once, then edited in place.

Written after the review it summarises, with its final text: the first review of a PR creates it
through the exactly-once write path (a store claim on :func:`agents.posting.keys.summary_key` and
the bot's own hidden marker in the comment), so a retried or concurrent review finds it instead of
posting a second one; every later review edits that same comment (an edit is idempotent: the same
text twice is the same comment). A summary someone deleted is written again, and recorded under the
same key. Its content (:func:`summary_view`): the findings still open, what folded and why, the
files not reviewed, cost and tokens.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from agents.github.errors import GitHubApiError
from agents.posting.keys import find_own_comment, summary_key, with_comment_marker
from agents.posting.once import Written, answered, task_number, worker_writes_once
from agents.posting.render import (
    Listed,
    PostedFinding,
    SummaryView,
    diff_line_url,
    mark_of,
    review_pointer,
)
from agents.posting.selection import Selection
from agents.work import ListedFile, Spend, Task

if TYPE_CHECKING:
    from agents.posting.threads import Earlier
    from agents.tools.context import WorkerContext

log = logging.getLogger("swarm.review")


async def ensure_summary(ctx: WorkerContext, body: str, *, bot_reviewed: bool | None) -> Written:
    """The PR's summary comment: created with ``body`` if it does not exist yet (else left
    alone: :func:`edit_summary` brings it up to date); ``held_by`` when another live worker is
    creating it at this moment. ``bot_reviewed``: whether discovery saw a review of the bot's
    on the PR (None: unknown)."""
    repo, number = ctx.task.repo, task_number(ctx)
    key = summary_key(repo, number)
    marked = with_comment_marker(body, key)

    async def find() -> Mapping[str, Any] | None:
        return await _find(ctx, key)

    async def create() -> Mapping[str, Any]:
        return await ctx.gateway.create_issue_comment(repo, number, marked)

    # A summary is written only after a review of the bot's: a PR that had none when discovery
    # read it this run has no summary to find (a claim of another writer is still looked up).
    first = answered(None) if bot_reviewed is False else None
    return await worker_writes_once(ctx, key, find, create, f"summary {key}", first)


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


def with_fixed_open(view: SummaryView, left_open: Sequence[PostedFinding]) -> SummaryView:
    """``view`` with the findings this push fixed whose threads stay open: listed as fixed,
    no longer among the open findings, and never as resolved."""
    if not left_open:
        return view
    urls = {p.url for p in left_open}
    still = [x for x in view.open_findings if x.url not in urls]
    fixed = [Listed(p.finding, p.url) for p in left_open]
    return replace(view, open_findings=still, fixed_open=fixed)


def summary_view(
    task: Task,
    files: Sequence[Mapping[str, Any]],
    what_changed: str,
    chosen: Selection,
    earlier: Earlier,
    resolved: Sequence[PostedFinding],
    review_url: str | None,
    spend: Spend,
) -> SummaryView:
    """The summary's content: the findings still open on the PR (posted before and not
    resolved, and this review's), each linked to its comment (an earlier one) or its line in
    the diff (this review's). ``files``: the whole PR's, as GitHub lists them."""
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
        areas=areas(files),
        open_findings=listed,
        outside_diff=chosen.outside,
        below_threshold=chosen.below_counts(),
        min_severity=task.rules.min_severity,
        over_cap=len(chosen.over_cap),
        max_comments=task.rules.max_comments,
        resolved=[Listed(p.finding, p.url) for p in resolved],
        not_reviewed=not_reviewed(files, task.files, task.listed),
        cost_usd=spend.cost_usd,
        input_tokens=spend.input_tokens,
        output_tokens=spend.output_tokens,
        model_calls=spend.model_calls,
    )


def area_of(path: str) -> str:
    """The area a file belongs to: its first two folders (``src/widgets``), or the root."""
    folders = path.split("/")[:-1]
    return "/".join(folders[:2]) if folders else "(root)"


def areas(files: Sequence[Mapping[str, Any]]) -> list[tuple[str, int, int, int]]:
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
    files: Sequence[Mapping[str, Any]], covered: Sequence[str], listed: Sequence[ListedFile] = ()
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


def preview(event: str, comments: Sequence[dict[str, Any]], summary: str) -> str:
    """What a dry run shows instead of posting: the review's pointer, its comments, the summary."""
    lines = [f"[{event}] " + review_pointer(None, len(comments))]
    lines += [f"  {c['path']}:{c['line']}: {c['body']}" for c in comments]
    return "\n".join([*lines, "", summary])
