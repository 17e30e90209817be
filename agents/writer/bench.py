"""The writer's bench: what one implement worker works on, set up by code before its session.

Before the first model call, as the writer bot with the worker's own token, code reads the
repository's default branch and its head (the base), the base's ``.github/swarm.yaml`` (the only
place a test command and the writer's limits are read from: never the issue, never a head), the
writer's branch for the issue (made at the base, or the one an earlier run made and committed
to: a re-run continues it, never a second branch), and fetches that branch's head into a private
temporary folder. The model changes the copy through the workspace tools; the writer tools
(:mod:`agents.tools.writer_tools`) run the tests, commit and open the one draft pull request.
The folder is removed whichever way the session ends.

A pull request already open for the branch (a run before opened it and was cut off before it
said so) ends the worker at once, skipped with its link: nothing is fetched or spent.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agents.github.branches import (
    ForeignBranch,
    branch_head,
    default_branch,
    ensure_branch,
    fetch_copy,
)
from agents.github.drafts import Drafted, find_open_pull
from agents.github.errors import GitHubApiError
from agents.github.models import Pull, author_login, pull_url
from agents.llm.untrusted import wrap_untrusted
from agents.outcome import TestRunLine, WorkDone, WorkRefused, WrittenWork
from agents.planning.repo_config import (
    CONFIG_PATH,
    RepoConfig,
    RepoConfigError,
    RepoTests,
    config_at,
)
from agents.redact import redact
from agents.workspace.copy import Workspace

if TYPE_CHECKING:
    from agents.tools.context import WorkerContext
    from agents.writer.body import ChangedFile
    from agents.writer.fixing import FixRound

BRANCH_PREFIX = "swarm/issue-"


def branch_for(number: int) -> str:
    """The writer's branch for issue ``number``: one per issue, the same in every run."""
    return f"{BRANCH_PREFIX}{number}"


@dataclass(frozen=True)
class TestRun:
    """One run of the repository's tests: the command, how it ended in one line, whether it
    passed (None: not run, and ``line`` says why), and its redacted output (untrusted)."""

    command: str
    line: str
    passed: bool | None
    output: str = ""


@dataclass
class WriterBench:
    """One implement worker's bench. ``head`` is the branch's head as this worker last knew
    it (the expected head of its next commit); ``pull`` the draft once it is open."""

    repo: str
    issue: int
    base: str
    base_sha: str
    branch: str
    head: str
    workspace: Workspace
    tests: RepoTests | None
    dry_run: bool = False
    test_runs: list[TestRun] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)
    # What the last commit of this session held (path -> text, deleted paths), so the same
    # change set is never committed twice when opening the pull request is tried again.
    committed: tuple[dict[str, str], tuple[str, ...]] | None = None
    pull: Pull | None = None
    # Files an earlier session of this issue committed to the branch (the copy holds them): a
    # re-run after a crash continues that work and is told so, rather than finding its own fix
    # already made and taking the issue for something else.
    earlier: tuple[str, ...] = ()
    # The model's plan and the branch's files against the base, once the pull request is
    # opened (or previewed): the worker's page shows them.
    plan: str = ""
    changed: list[ChangedFile] = field(default_factory=list)
    # A fix round on the writer's open pull request (agents.writer.fixing): what it answers;
    # None for an implement session.
    fixing: FixRound | None = None
    # Plan approval (agents.writer.approval): a session that only proposes a plan, and the
    # gate's words for the session (the approved plan, or a rejected one with the note).
    planning: bool = False
    guidance: str = ""

    def written(self) -> WrittenWork | None:
        """What the session changed and ran, for the worker's outcome (None: nothing yet)."""
        if not (self.plan or self.changed or self.test_runs):
            return None
        return WrittenWork(
            plan=redact(self.plan),
            files=len(self.changed),
            additions=sum(f.additions for f in self.changed),
            deletions=sum(f.deletions for f in self.changed),
            test_runs=[
                TestRunLine(command=r.command, line=r.line, passed=r.passed) for r in self.test_runs
            ],
        )

    def briefing(self) -> str:
        """What the model is told about its branch before it starts ("" for a new branch)."""
        if self.fixing is not None:
            return self.fixing.briefing()
        if self.planning or self.guidance:
            return self._gate_briefing()
        if self.head == self.base_sha:
            return ""
        said = (
            f"Your branch {self.branch} already holds an earlier session's commits for issue "
            f"#{self.issue} over the base ({self.base_sha[:12]}), and your working copy is its "
            "head. Check that work, finish it if needed, run the tests and open the pull "
            "request; do not make the same change again."
        )
        if not self.earlier:
            return said + " GitHub could not list the files it changed."
        # File names are the repository's text: delimited like any other.
        listed = "\n".join(self.earlier[:50])
        if len(self.earlier) > 50:
            listed += f"\n[and {len(self.earlier) - 50} more]"
        files = wrap_untrusted("listing", redact(listed), source=f"{self.branch} over the base")
        return f"{said} The files it changed:\n{files}"

    def _gate_briefing(self) -> str:
        """What a session under plan approval is told: plan only, or follow the approved
        plan. The plan is the model's earlier words and the note a person's: both delimited."""
        if not self.planning:
            plan = wrap_untrusted("approved_plan", redact(self.guidance), source="the gate")
            return (
                "A maintainer approved this plan for the issue before anything was written. "
                f"Carry it out, run the tests and open the pull request:\n{plan}"
            )
        said = (
            "This session only plans: a maintainer approves the plan before anything is "
            "written. Read the issue and the code, then call propose_plan once with the change "
            "you would make, and stop. You cannot change files in this session."
        )
        if not self.guidance:
            return said
        earlier = wrap_untrusted("rejected_plan", redact(self.guidance), source="the gate")
        return (
            f"{said} A maintainer rejected your earlier plan with a note; plan again with the "
            f"note in mind:\n{earlier}"
        )

    def unfinished(self) -> str | None:
        """Why the task is not done when the session ends, or None when it is."""
        if self.planning:
            return None if self.plan else "the session ended without a plan (propose_plan)"
        if self.fixing is not None:
            if self.fixing.pushed or self.dry_run:
                return None
            return "the session ended without pushing its fix (push_fix)"
        if self.pull is not None or self.dry_run:
            return None
        return "the session ended without opening a pull request (open_pull_request)"


async def base_config(ctx: WorkerContext, sha: str) -> RepoConfig:
    """The base commit's ``.github/swarm.yaml`` (none: the defaults); an invalid file stops the
    writer, which would otherwise run with limits the repository did not ask for."""
    try:
        return await config_at(ctx.gateway, ctx.task.repo, sha)
    except RepoConfigError as exc:
        raise WorkRefused(
            f"{CONFIG_PATH} at {sha[:12]} is invalid, so the writer does not work here: {exc}"
        ) from None


async def _branch(ctx: WorkerContext, name: str, base_sha: str) -> str:
    """The head of the writer's branch: made at the base (none in a dry run, which reads only),
    or the one an earlier run made; refused when it is someone else's."""
    repo = ctx.task.repo
    if ctx.dry_run:
        return await branch_head(ctx.gateway, repo, name) or base_sha
    login = ctx.bot_login or ctx.gateway.identity
    try:
        made = await ensure_branch(ctx.gateway, repo, name, base_sha, login=login)
    except ForeignBranch as exc:
        raise WorkRefused(str(exc)) from None
    return made.head


@asynccontextmanager
async def writer_bench(ctx: WorkerContext) -> AsyncIterator[None]:
    """Set up ``ctx``'s bench and working copy for the session; the copy is removed after it."""
    task = ctx.task
    if task.number is None:
        raise WorkRefused("an implement task names no issue")
    repo, gateway = task.repo, ctx.gateway
    base = await default_branch(gateway, repo)
    base_sha = await branch_head(gateway, repo, base)
    if base_sha is None:
        raise WorkRefused(f"the default branch {base!r} of {repo} has no head to work from")
    config = await base_config(ctx, base_sha)
    if config.roles is not None and ctx.role_id not in config.roles:
        raise WorkRefused(f"{CONFIG_PATH} of {repo} does not list the role {ctx.role_id!r}")
    name = branch_for(task.number)
    if task.planning:
        # Planning writes nothing, not even the branch: it reads what a writer would start from.
        head = await branch_head(gateway, repo, name) or base_sha
    else:
        head = await _branch(ctx, name, base_sha)
    if not ctx.dry_run and not task.planning:
        found = await find_open_pull(gateway, repo, name)
        if found is not None:
            await settle(ctx, Drafted(found, opened=False))
            raise WorkDone(
                f"draft pull request #{found['number']} is open already", pull_url(found)
            )
    async with working_copy(ctx, head, config, "swarm-writer-") as workspace:
        ctx.bench = WriterBench(
            repo=repo,
            issue=task.number,
            base=base,
            base_sha=base_sha,
            branch=name,
            head=head,
            workspace=workspace,
            tests=config.tests,
            dry_run=ctx.dry_run,
            earlier=await _earlier_files(ctx, base_sha, head),
            planning=task.planning,
            guidance=task.guidance,
        )
        yield


@asynccontextmanager
async def working_copy(
    ctx: WorkerContext, head: str, config: RepoConfig, prefix: str
) -> AsyncIterator[Workspace]:
    """Commit ``head`` of the task's repository fetched into a private temporary folder, as
    ``ctx``'s workspace under the base's writer rules; the folder is removed after the block."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        copy = await fetch_copy(ctx.gateway, ctx.task.repo, head, folder / "copy")
        workspace = Workspace(copy.root, config.writer.policy())
        ctx.workspace = workspace
        yield workspace
    finally:
        ctx.workspace = None
        await asyncio.to_thread(shutil.rmtree, folder, True)


async def _earlier_files(ctx: WorkerContext, base_sha: str, head: str) -> tuple[str, ...]:
    """The files the branch changed over the base before this session (none for a new
    branch, or when GitHub cannot compare: the briefing then says so)."""
    if head == base_sha:
        return ()
    try:
        found = await ctx.gateway.compare(ctx.task.repo, base_sha, head)
    except GitHubApiError:
        return ()
    files = found.get("files") if isinstance(found, dict) else None
    if not isinstance(files, list):
        return ()
    return tuple(str(f["filename"]) for f in files if isinstance(f, dict) and f.get("filename"))


async def settle(ctx: WorkerContext, drafted: Drafted) -> None:
    """Record ``drafted``'s pull request as the task's write: its key posted, so no run works on
    the issue again.

    A pull request from the writer's branch that the writer bot did not open is not its own:
    someone with write access opened it, and the writer leaves it alone."""
    from agents.posting.writer import PostedReview, task_write_key

    pull = drafted.pull
    number, url, author = pull["number"], pull_url(pull), author_login(pull)
    login = ctx.bot_login or ctx.gateway.identity
    if author and author != login:
        raise WorkRefused(
            f"pull request #{number} from {pull['head']['ref']} was opened by {author}, not "
            f"{login}: the writer leaves it alone"
        )
    key = task_write_key(ctx)
    if key is not None:
        store = ctx.store
        if await asyncio.to_thread(store.get_review_key, key) is None:
            await asyncio.to_thread(store.claim_review_key, key, ctx.worker_id)
        await asyncio.to_thread(store.mark_review_posted, key, number, url)
    ctx.review = PostedReview(number, url, 0, "draft", already_posted=not drafted.opened)
