"""GitHub tools: read the task's pull request or issue, and the few writes a role may make.

Everything read from GitHub is untrusted (PR authors write it), so tool results wrap it in
delimiters. The tools act only on the worker's own task: the target comes from the envelope,
not from the model, so text in a PR cannot steer a write to another repository or PR.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, model_validator

from agents.github.models import Pull
from agents.llm.turn import ToolResult
from agents.llm.untrusted import wrap_untrusted
from agents.posting.comment import post_comment_once
from agents.posting.findings import Finding
from agents.posting.once import task_number
from agents.posting.writer import Published, ReviewWriter
from agents.tools import pages
from agents.tools.base import OfferedTool, Tool, ToolError
from agents.tools.context import WorkerContext
from agents.tools.pull_files import (
    MAX_LISTED_FILES,
    changed_files,
    listed_pull,
    pr_files,
    pr_patches,
    pull_view,
)

MAX_FINDINGS = 100


class _Args(BaseModel):
    model_config = ConfigDict(extra="ignore")


class TargetArgs(_Args):
    """The target is fixed by the task; these are accepted for the model's convenience only."""

    repo: str | None = Field(default=None, description="owner/name (defaults to the task's)")
    number: int | None = Field(default=None, description="PR/issue number (the task's)")


class FilesArgs(TargetArgs):
    page: int = Field(default=1, ge=1, description="page of changed files, from 1")
    path: str | None = Field(
        default=None, max_length=500, description="one changed file, to read more of its patch"
    )
    patch_page: int = Field(default=1, ge=1, description="with path: page of that patch")


class ReadFileArgs(TargetArgs):
    path: str = Field(min_length=1, max_length=500, description="file path in the repository")
    page: int = Field(default=1, ge=1, description="page of the file, from 1")


class SubmitReviewArgs(TargetArgs):
    summary: str = Field(
        min_length=1,
        max_length=20_000,
        # "body" is this field's earlier name.
        validation_alias=AliasChoices("summary", "body"),
        description="plain text, no markup: what the pull request changes, by area",
    )
    findings: list[Finding] = Field(
        default_factory=list,
        max_length=MAX_FINDINGS,
        description="every problem found, as data; the product renders and posts them",
    )
    event: Literal["COMMENT", "REQUEST_CHANGES", "APPROVE"] = "COMMENT"

    @model_validator(mode="before")
    @classmethod
    def _no_free_text_comments(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("comments"):
            raise ValueError(
                "inline comments are reported as findings now: pass them in `findings` "
                "(path, line, start_line, severity, category, message, replacement)"
            )
        return data


class CommentArgs(TargetArgs):
    body: str = Field(min_length=1, max_length=10_000)


class LabelsArgs(TargetArgs):
    labels: list[str] = Field(min_length=1, max_length=10)


def check_target(ctx: WorkerContext, args: TargetArgs) -> None:
    if args.repo is not None and args.repo.lower() != ctx.task.repo.lower():
        raise ToolError(f"this worker may only act on {ctx.task.repo}, not {args.repo}")
    if args.number is not None and args.number != ctx.task.number:
        raise ToolError(f"this worker may only act on #{ctx.task.number}, not #{args.number}")


def _untrusted(kind: str, value: Any, source: str) -> str:
    text = value if isinstance(value, str) else json.dumps(value, indent=1, sort_keys=True)
    return wrap_untrusted(kind, text, source=source)


async def _with_counts(ctx: WorkerContext, pull: Pull) -> Pull:
    """The PR with the counts only ``GET /pulls/{n}`` answers (discovery's listing has none):
    summed from its file listing, which is complete below GitHub's 3,000-file cap; read from
    GitHub beyond it."""
    files = await pr_files(ctx)
    if len(files) >= MAX_LISTED_FILES:
        ctx.pull = await ctx.gateway.get_pull(ctx.task.repo, task_number(ctx))
        return ctx.pull
    counted = pull.copy()
    counted["changed_files"] = len(files)
    counted["additions"] = sum(int(f.get("additions") or 0) for f in files)
    counted["deletions"] = sum(int(f.get("deletions") or 0) for f in files)
    ctx.pull = counted
    return counted


def github_tools(ctx: WorkerContext) -> list[OfferedTool]:
    repo = ctx.task.repo

    async def get_pull(args: TargetArgs) -> ToolResult:
        check_target(ctx, args)
        pull = await listed_pull(ctx)
        if "changed_files" not in pull:
            pull = await _with_counts(ctx, pull)
        view = {
            "number": pull.get("number"),
            "title": pull.get("title"),
            "body": pull.get("body") or "",
            "author": (pull.get("user") or {}).get("login"),
            "state": pull.get("state"),
            "draft": pull.get("draft"),
            "head": {"sha": (pull.get("head") or {}).get("sha")},
            "base": {"sha": (pull.get("base") or {}).get("sha")},
            "changed_files": pull.get("changed_files"),
            "additions": pull.get("additions"),
            "deletions": pull.get("deletions"),
        }
        summary = f"PR #{view['number']}: {view['changed_files']} file(s)"
        return ToolResult(
            _untrusted("pull_request", view, f"{repo}#{view['number']}"), summary=summary
        )

    def listed_reason(path: str) -> str | None:
        return next((f.reason for f in ctx.task.listed if f.path == path), None)

    async def list_pull_files(args: FilesArgs) -> ToolResult:
        check_target(ctx, args)
        reason = listed_reason(args.path) if args.path else None
        if args.path and reason is not None:
            patch = (await pr_patches(ctx)).get(args.path)
            if patch is None:
                note = f"GitHub shows no patch for {args.path}; read_file gives an excerpt of it"
                raise ToolError(f"{note} ({reason})")
            body, footer, summary = pages.excerpt(patch, args.path, reason, "patch")
            wrapped = _untrusted("diff", body, f"{repo}#{ctx.task.number}:{args.path}")
            return ToolResult(f"{wrapped}\n{footer}", summary=summary)
        files = await changed_files(ctx)
        if args.path:
            view, summary = pages.one_patch(files, args.path, ctx.pages, args.patch_page)
        else:
            view, summary = pages.listing(files, ctx.pages, args.page)
        return ToolResult(_untrusted("diff", view, f"{repo}#{ctx.task.number}"), summary=summary)

    async def read_file(args: ReadFileArgs) -> ToolResult:
        check_target(ctx, args)
        ref = ctx.task.head_sha
        text = await ctx.gateway.get_file(repo, args.path, ref)
        reason = listed_reason(args.path)
        if reason is not None:
            body, footer, summary = pages.excerpt(text, args.path, reason)
        else:
            body, footer, summary = pages.file_page(text, args.path, ctx.pages, args.page)
        wrapped = _untrusted("file", body, f"{repo}:{args.path}@{(ref or 'HEAD')[:12]}")
        # The footer is the tool's own word, outside the untrusted file text.
        return ToolResult(f"{wrapped}\n{footer}" if footer else wrapped, summary=summary)

    async def get_issue(args: TargetArgs) -> ToolResult:
        check_target(ctx, args)
        issue = await ctx.gateway.get_issue(repo, task_number(ctx))
        view = {
            "number": issue.get("number"),
            "title": issue.get("title"),
            "body": issue.get("body") or "",
            "author": (issue.get("user") or {}).get("login"),
            "labels": [
                lbl.get("name") for lbl in issue.get("labels") or [] if isinstance(lbl, dict)
            ],
            "state": issue.get("state"),
        }
        return ToolResult(
            _untrusted("issue", view, f"{repo}#{view['number']}"), summary="issue read"
        )

    async def submit_review(args: SubmitReviewArgs) -> ToolResult:
        check_target(ctx, args)
        if args.event == "APPROVE":
            raise ToolError("swarm workers never approve pull requests; post COMMENT instead")
        if ctx.review is not None or ctx.submitted:
            raise ToolError("this worker already submitted its one review")
        findings = list(args.findings)
        if ctx.is_shard:
            # A shard's findings go to the summarizer, which posts the single review.
            known = ctx.changed_paths or {str(f.get("filename")) for f in await changed_files(ctx)}
            outside = sorted({f.path for f in findings} - known)
            if outside:
                raise ToolError(f"findings on files this shard does not cover: {outside}")
            ctx.findings, ctx.submitted = findings, True
            recorded = f"recorded {len(findings)} finding(s) for the summarizer"
            return ToolResult(recorded, summary="shard", closing=_closing(args, recorded))
        writer = ReviewWriter(ctx, await pull_view(ctx))
        published = await writer.publish(
            what_changed=args.summary, findings=findings, event=args.event
        )
        ctx.findings, ctx.submitted = findings, True
        if ctx.dry_run:
            ctx.preview = published.preview
            said = f"dry run: nothing posted; {_told(published)}"
            return ToolResult(said, closing=_closing(args, said))
        assert published.review is not None
        ctx.review = published.review
        ctx.summary_url = published.summary_url
        if published.review.already_posted:
            said = f"a review for this head SHA was already posted: {published.review.url}"
            return ToolResult(said, closing=_closing(args, said))
        said = f"review posted: {published.review.url}; {_told(published)}"
        return ToolResult(said, closing=_closing(args, said))

    async def comment_issue(args: CommentArgs) -> ToolResult:
        check_target(ctx, args)
        if ctx.comments_posted:
            raise ToolError("this worker already posted its one comment")
        if ctx.dry_run:
            ctx.preview = args.body
            ctx.comments_posted += 1
            return ToolResult("dry run: comment not posted")
        written = await post_comment_once(ctx, task_number(ctx), args.body)
        ctx.comments_posted += 1
        if written.held_by is not None:
            raise ToolError(f"worker {written.held_by} is posting this issue's comment now")
        if written.already:
            return ToolResult(f"this issue already has the comment: {written.url or '(posted)'}")
        return ToolResult("comment posted")

    async def add_labels(args: LabelsArgs) -> ToolResult:
        check_target(ctx, args)
        if ctx.dry_run:
            ctx.labels_added = list(args.labels)
            return ToolResult(f"dry run: labels not added ({', '.join(args.labels)})")
        await ctx.gateway.add_labels(repo, task_number(ctx), args.labels)
        ctx.labels_added = list(args.labels)
        return ToolResult(f"labels added: {', '.join(args.labels)}")

    return [
        Tool(
            "get_pull",
            "Read the pull request under review: title, body, author, head and base SHAs.",
            TargetArgs,
            get_pull,
        ),
        Tool(
            "list_pull_files",
            "List the files this review covers with their diff patches, one page at a time; "
            "a long patch is paged too (path and patch_page read the rest).",
            FilesArgs,
            list_pull_files,
        ),
        Tool(
            "read_file",
            "Read one file of the repository at the pull request's head SHA, one page at a time.",
            ReadFileArgs,
            read_file,
        ),
        Tool(
            "get_issue",
            "Read the issue being triaged: title, body, author, labels.",
            TargetArgs,
            get_issue,
        ),
        Tool(
            "submit_review",
            "Submit the single review: a plain-text summary of what the pull request changes "
            "and every finding as data (path, head-side lines, severity, category, a plain "
            "message, optionally the replacement text for exactly those lines). The product "
            "decides what is posted inline and renders it; write no markup.",
            SubmitReviewArgs,
            submit_review,
        ),
        Tool(
            "comment_issue",
            "Post this worker's single comment on the issue.",
            CommentArgs,
            comment_issue,
        ),
        Tool(
            "add_labels",
            "Add labels to the issue or pull request.",
            LabelsArgs,
            add_labels,
        ),
    ]


def _closing(args: SubmitReviewArgs, said: str) -> str:
    """A review worker's last words once its review is in (its continuity for the next session
    on this PR): what it concluded and what became of it."""
    return f"{args.summary.strip()}\n\n{len(args.findings)} finding(s); {said}"


def _told(published: Published) -> str:
    """What became of the findings, for the model (counts only: it wrote the texts)."""
    chosen = published.selection
    suggested = sum(1 for _f, where in chosen.inline if where == "suggestion")
    parts = [
        f"{len(chosen.inline)} finding(s) inline ({suggested} with a committable suggestion)",
        f"{len(chosen.below)} below the repository's min_severity",
        f"{len(chosen.over_cap)} over its max_comments",
        f"{len(chosen.outside)} outside the diff",
        f"{len(chosen.repeated)} already posted before",
        f"{len(published.resolved)} earlier thread(s) resolved",
    ]
    if published.fixed_open:
        parts.append(f"{len(published.fixed_open)} fixed, thread(s) left open")
    summary = f"; summary: {published.summary_url}" if published.summary_url else ""
    return ", ".join(parts) + summary
