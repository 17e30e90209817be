"""GitHub tools: read the task's pull request or issue, and the few writes a role may make.

Everything read from GitHub is untrusted (PR authors write it), so tool results wrap it in
delimiters. The tools act only on the worker's own task: the target comes from the envelope,
not from the model, so text in a PR cannot steer a write to another repository or PR.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.llm.turn import ToolResult
from agents.llm.untrusted import wrap_untrusted
from agents.tools import pages
from agents.tools.anchors import split_anchored, with_loose_comments
from agents.tools.base import OfferedTool, Tool, ToolError
from agents.tools.comment import post_comment_once
from agents.tools.context import WorkerContext
from agents.tools.pull_files import changed_files, pr_patches, task_number
from agents.tools.review import post_once

MAX_COMMENTS = 50


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


class ReviewComment(BaseModel):
    model_config = ConfigDict(extra="ignore")

    path: str = Field(min_length=1)
    line: int = Field(ge=1, description="line number in the head version of the file")
    body: str = Field(min_length=1, max_length=4000)
    side: Literal["RIGHT", "LEFT"] = "RIGHT"


class SubmitReviewArgs(TargetArgs):
    body: str = Field(min_length=1, max_length=20_000, description="overall review text")
    event: Literal["COMMENT", "REQUEST_CHANGES", "APPROVE"] = "COMMENT"
    comments: list[ReviewComment] = Field(default_factory=list, max_length=MAX_COMMENTS)


class CommentArgs(TargetArgs):
    body: str = Field(min_length=1, max_length=10_000)


class LabelsArgs(TargetArgs):
    labels: list[str] = Field(min_length=1, max_length=10)


def _check_target(ctx: WorkerContext, args: TargetArgs) -> None:
    if args.repo is not None and args.repo.lower() != ctx.task.repo.lower():
        raise ToolError(f"this worker may only act on {ctx.task.repo}, not {args.repo}")
    if args.number is not None and args.number != ctx.task.number:
        raise ToolError(f"this worker may only act on #{ctx.task.number}, not #{args.number}")


def _untrusted(kind: str, value: Any, source: str) -> str:
    text = value if isinstance(value, str) else json.dumps(value, indent=1, sort_keys=True)
    return wrap_untrusted(kind, text, source=source)


def github_tools(ctx: WorkerContext) -> list[OfferedTool]:
    repo = ctx.task.repo

    async def get_pull(args: TargetArgs) -> ToolResult:
        _check_target(ctx, args)
        pull = await ctx.gateway.get_pull(repo, task_number(ctx))
        ctx.pull = pull
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

    async def list_pull_files(args: FilesArgs) -> ToolResult:
        _check_target(ctx, args)
        files = await changed_files(ctx)
        if args.path:
            view, summary = pages.one_patch(files, args.path, ctx.pages, args.patch_page)
        else:
            view, summary = pages.listing(files, ctx.pages, args.page)
        return ToolResult(_untrusted("diff", view, f"{repo}#{ctx.task.number}"), summary=summary)

    async def read_file(args: ReadFileArgs) -> ToolResult:
        _check_target(ctx, args)
        ref = ctx.task.head_sha
        text = await ctx.gateway.get_file(repo, args.path, ref)
        body, footer, summary = pages.file_page(text, args.path, ctx.pages, args.page)
        wrapped = _untrusted("file", body, f"{repo}:{args.path}@{(ref or 'HEAD')[:12]}")
        # The footer is the tool's own word, outside the untrusted file text.
        return ToolResult(f"{wrapped}\n{footer}" if footer else wrapped, summary=summary)

    async def get_issue(args: TargetArgs) -> ToolResult:
        _check_target(ctx, args)
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
        _check_target(ctx, args)
        if args.event == "APPROVE":
            raise ToolError("swarm workers never approve pull requests; post COMMENT instead")
        if ctx.review is not None or ctx.findings:
            raise ToolError("this worker already submitted its one review")
        comments = [c.model_dump() for c in args.comments]
        if ctx.is_shard:
            # A shard's findings go to the summarizer, which posts the single review.
            known = ctx.changed_paths or {str(f.get("filename")) for f in await changed_files(ctx)}
            outside = sorted({c.path for c in args.comments} - known)
            if outside:
                raise ToolError(f"comments on files this PR does not change: {', '.join(outside)}")
            ctx.findings = [
                {"path": c["path"], "line": c["line"], "body": c["body"]} for c in comments
            ]
            return ToolResult(
                f"recorded {len(comments)} finding(s) for the summarizer", summary="shard"
            )
        placed, loose = split_anchored(comments, await pr_patches(ctx))
        body = with_loose_comments(args.body, loose)
        moved = (
            f"; {len(loose)} comment(s) on lines outside the diff went into the review body"
            if loose
            else ""
        )
        if ctx.dry_run:
            ctx.preview = _preview(body, args.event, placed)
            ctx.findings = comments
            return ToolResult(
                f"dry run: nothing posted; the review was recorded as a preview{moved}"
            )
        posted = await post_once(ctx, body=body, event=args.event, comments=placed)
        ctx.review = posted
        ctx.findings = comments
        if posted.already_posted:
            return ToolResult(f"a review for this head SHA was already posted: {posted.url}")
        return ToolResult(
            f"review posted with {posted.comments} inline comment(s){moved}: {posted.url}"
        )

    async def comment_issue(args: CommentArgs) -> ToolResult:
        _check_target(ctx, args)
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
        _check_target(ctx, args)
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
            "Submit the single review: overall text plus inline comments on changed lines.",
            SubmitReviewArgs,
            submit_review,
            needs_permission=("pull_requests", "write"),
        ),
        Tool(
            "comment_issue",
            "Post this worker's single comment on the issue.",
            CommentArgs,
            comment_issue,
            needs_permission=("issues", "write"),
        ),
        Tool(
            "add_labels",
            "Add labels to the issue or pull request.",
            LabelsArgs,
            add_labels,
            needs_permission=("issues", "write"),
        ),
    ]


def _preview(body: str, event: str, comments: list[dict[str, Any]]) -> str:
    lines = [f"[{event}] {body.strip()}"]
    lines += [f"  {c['path']}:{c['line']}: {c['body']}" for c in comments]
    return "\n".join(lines)
