"""The pull request's files as the tools see them: the reviewed set (whole PR, changes since the
last reviewed commit, or one shard's part) and the whole PR's patches that comments anchor to."""

from __future__ import annotations

from typing import Any

from agents.github.models import Pull
from agents.github.pull_snapshots import PullSnapshot, patches_by_path
from agents.posting.once import task_number
from agents.tools.context import WorkerContext

# GitHub lists at most 3,000 of a pull request's files (``GET /pulls/{n}/files``).
MAX_LISTED_FILES = 3000


async def changed_files(ctx: WorkerContext) -> list[dict[str, Any]]:
    """The files this worker reviews: the PR's, or only those changed since the last reviewed
    SHA (re-review), narrowed to the shard's files when the PR is sharded."""
    if ctx.pull_files is not None:
        return ctx.pull_files  # read once per worker: the head SHA does not move under it
    task = ctx.task
    task_number(ctx)  # a task without a number has no files: refused before any call
    if task.since_sha and task.head_sha:
        compared = await ctx.gateway.compare(task.repo, task.since_sha, task.head_sha)
        files = list(compared.get("files") or [])
    else:
        files = await pr_files(ctx)
    if task.files:
        wanted = set(task.files)
        files = [f for f in files if f.get("filename") in wanted]
    ctx.changed_paths = {str(f.get("filename")) for f in files}
    ctx.pull_files = files
    return files


async def pr_patches(ctx: WorkerContext) -> dict[str, str | None]:
    """Each file of the whole pull request with its patch: what inline comments anchor to (a
    re-review reads a narrower diff, but comments still sit on the PR's)."""
    if ctx.pr_patches is None:
        await pr_files(ctx)
    return ctx.pr_patches or {}


async def pr_files(ctx: WorkerContext) -> list[dict[str, Any]]:
    """The whole pull request's files as GitHub lists them (status, additions, deletions), read
    once per worker: the outline every worker starts from, and what comments anchor to."""
    if ctx.pr_files is None:
        kept = snapshot(ctx).files
        if kept is not None:
            files = [dict(f) for f in kept]
        else:
            files = await ctx.gateway.list_pull_files(ctx.task.repo, task_number(ctx))
        _keep_patches(ctx, files)
    return ctx.pr_files or []


def snapshot(ctx: WorkerContext) -> PullSnapshot:
    """What discovery read of the task's PR at its head in this process (empty when nothing)."""
    task, kept = ctx.task, ctx.gateway.snapshots
    if kept is None or task.number is None:
        return PullSnapshot()
    return kept.get(ctx.gateway.identity, task.repo, task.number, task.head_sha)


async def pull_view(ctx: WorkerContext) -> PullSnapshot:
    """What the review's writer reads of the PR, read here: what discovery saw of it this run
    (the pull request, its reviews), with the whole PR's files (what comments anchor to) in
    place of the files discovery kept (those are the same when it kept them)."""
    seen = snapshot(ctx)
    files = tuple(await pr_files(ctx))
    return PullSnapshot(pull=seen.pull, files=files, reviews=seen.reviews)


async def listed_pull(ctx: WorkerContext) -> Pull:
    """The PR as discovery listed it (title, body, head, base, author), else as GitHub reads it
    now; kept on the context for the worker's other reads."""
    if ctx.pull is None:
        kept = snapshot(ctx).pull
        if kept is not None:
            ctx.pull = kept.copy()
        else:
            ctx.pull = await ctx.gateway.get_pull(ctx.task.repo, task_number(ctx))
    return ctx.pull


def _keep_patches(ctx: WorkerContext, files: list[dict[str, Any]]) -> None:
    ctx.pr_files = files
    ctx.pr_patches = patches_by_path(files)
