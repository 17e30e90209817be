"""The writer's two tools beyond its working copy: run the repository's tests, and open the one
draft pull request. The model asks; code decides what runs and what is written.

``run_tests`` takes no argument: the command is the base branch's (``agents.writer.suite``), so
nothing the model read (an issue asking for ``curl ... | sh``) can choose it. Its output is the
repository's text: redacted and inside untrusted delimiters.

``open_pull_request`` takes the model's title, plan and notes. Code computes the change set from
the copy (re-checked against the protected paths and caps), commits it through
``createCommitOnBranch`` on the writer's own branch with the head this worker last saw, and opens
the draft (or finds the one open), its body written by :mod:`agents.writer.body`. Called again
in the same session it answers with the pull request already open; a change made after it is not
committed (one pull request, one commit per session).
"""

from __future__ import annotations

import logging

from pydantic import BaseModel, ConfigDict, Field

from agents.github.commits import StaleHead, commit_on_branch
from agents.github.drafts import open_draft_pull
from agents.github.errors import GitHubApiError
from agents.github.models import pull_url
from agents.llm.turn import ToolResult
from agents.llm.untrusted import wrap_untrusted
from agents.outcome import WorkRefused
from agents.posting.keys import inert
from agents.redact import redact
from agents.tools.base import OfferedTool, Tool, ToolError
from agents.tools.context import WorkerContext
from agents.workspace.copy import ChangeSet
from agents.workspace.policy import ChangeRefused
from agents.writer.bench import WriterBench, settle
from agents.writer.body import MAX_MODEL_CHARS, ChangedFile, pull_body
from agents.writer.suite import run_suite

log = logging.getLogger("agents.writer")

MAX_TITLE_CHARS = 120


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PullArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=3, max_length=MAX_TITLE_CHARS, description="one line")
    plan: str = Field(min_length=1, max_length=20_000, description="what you set out to do")
    summary: str = Field(
        min_length=1, max_length=20_000, description="what you changed and what is left open"
    )


async def _changed_files(ctx: WorkerContext, bench: WriterBench) -> list[ChangedFile]:
    """The branch's files against the base, as GitHub compares them (a change an earlier run
    committed counts too); this session's change set if GitHub cannot say."""
    try:
        found = await ctx.gateway.compare(bench.repo, bench.base_sha, bench.head)
    except GitHubApiError:
        found = {}
    files = found.get("files") if isinstance(found, dict) else None
    if isinstance(files, list):
        return [
            ChangedFile(
                str(f.get("filename")),
                str(f.get("status") or "modified"),
                int(f.get("additions") or 0),
                int(f.get("deletions") or 0),
            )
            for f in files
            if isinstance(f, dict) and f.get("filename")
        ]
    return [ChangedFile(p, "changed", 0, 0) for p in bench.workspace.changes().paths]


async def commit_changes(
    ctx: WorkerContext, bench: WriterBench, title: str, changes: ChangeSet, message: str = ""
) -> None:
    """Commit ``changes`` on the writer's branch (signed by GitHub as the App), once."""
    if not changes.additions and not changes.deletions:
        return
    made = (changes.additions, changes.deletions)
    if bench.committed == made:
        return  # committed already; opening the pull request is what failed before
    try:
        commit = await commit_on_branch(
            ctx.gateway,
            bench.repo,
            bench.branch,
            bench.head,
            title,
            message or f"For #{bench.issue}.",
            additions=changes.additions,
            deletions=changes.deletions,
        )
    except StaleHead:
        raise WorkRefused(
            f"the branch {bench.branch} moved while the writer worked (someone pushed to it); "
            "nothing was committed"
        ) from None
    bench.head = commit.oid
    bench.commits.append(commit.oid)
    bench.committed = made


class PlanArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    plan: str = Field(
        min_length=1,
        max_length=MAX_MODEL_CHARS,
        description="the change you would make: which files, what in them, which tests",
    )


def writer_tools(ctx: WorkerContext, bench: WriterBench) -> list[OfferedTool]:
    """The tools on ``bench``; their permissions are declared in :mod:`agents.tools.catalog`.
    A planning session (plan approval) gets only ``propose_plan``: it writes nothing."""
    if bench.planning:

        async def propose_plan(args: PlanArgs) -> ToolResult:
            # Kept, not posted: the flow's gate posts it on the issue once and waits for a
            # maintainer (agents.writer.approval).
            bench.plan = args.plan
            return ToolResult(
                "plan recorded: a maintainer decides on it before anything is written; stop here",
                summary="plan proposed",
            )

        return [
            Tool(
                "propose_plan",
                "Propose your plan for the issue: the change you would make, in which files, "
                "and how you would test it. A maintainer approves it before anything is "
                "written. Call it once, then stop.",
                PlanArgs,
                propose_plan,
            )
        ]

    async def run_tests(_args: NoArgs) -> ToolResult:
        run = await run_suite(bench)
        verdict = {True: "tests passed", False: "tests failed", None: "tests not run"}
        head = f"{verdict[run.passed]}: {run.line}"
        if run.command:
            head += f" (`{run.command}`, the base branch's command)"
        if run.passed is None:
            return ToolResult(head, summary=head)
        output = wrap_untrusted("test_output", redact(run.output), source="tests")
        return ToolResult(f"{head}\n{output}", summary=head)

    async def open_pull_request(args: PullArgs) -> ToolResult:
        if bench.pull is not None:
            number = bench.pull["number"]
            return ToolResult(
                f"draft pull request #{number} already open: {pull_url(bench.pull)}",
                summary=f"#{number} already open",
            )
        try:
            changes = bench.workspace.final_changes()
        except ChangeRefused as exc:
            raise ToolError(redact(str(exc))) from None
        if not changes.paths and bench.head == bench.base_sha:
            raise ToolError(
                "nothing changed yet: change the working copy with the workspace tools first"
            )
        # The title is also the commit's headline. The outbound sanitiser keeps HTML comments
        # (a body's own markers live in them), so a marker the model pasted into the title
        # would leave whole: made inert here, as the body's model text is (agents.writer.body).
        title = inert(" ".join(args.title.split()))
        # Under plan approval the body's plan is the one a maintainer approved, not the model's
        # later words about it.
        plan = bench.guidance or args.plan
        if ctx.dry_run:
            files = [ChangedFile(p, "changed", 0, 0) for p in changes.paths]
            bench.plan, bench.changed = plan, files
            ctx.preview = pull_body(
                issue=bench.issue,
                plan=plan,
                notes=args.summary,
                files=files,
                runs=bench.test_runs,
                cost_usd=ctx.spend().cost_usd,
                role=ctx.role_id,
            )
            return ToolResult("dry run: nothing committed or opened", summary="dry run")
        await commit_changes(ctx, bench, title, changes)
        bench.plan, bench.changed = plan, await _changed_files(ctx, bench)
        body = pull_body(
            issue=bench.issue,
            plan=plan,
            notes=args.summary,
            files=bench.changed,
            runs=bench.test_runs,
            cost_usd=ctx.spend().cost_usd,
            role=ctx.role_id,
        )
        drafted = await open_draft_pull(
            ctx.gateway, bench.repo, bench.branch, bench.base, title, body
        )
        await settle(ctx, drafted)
        bench.pull = pull = drafted.pull
        said = "opened" if drafted.opened else "found open"
        log.info("%s draft pull request #%d for #%d", said, pull["number"], bench.issue)
        line = f"{said} draft pull request #{pull['number']}: {pull_url(pull)}"
        return ToolResult(line, summary=f"{said} #{pull['number']}")

    return [
        Tool(
            "run_tests",
            "Run the repository's own test command (from its base branch's settings) on the "
            "working copy, in a sandbox without network; read the result and the output.",
            NoArgs,
            run_tests,
        ),
        Tool(
            "open_pull_request",
            "Commit the working copy's changes to your branch and open one draft pull request "
            "that closes the issue: a one-line title, your plan, and a summary of what you "
            "changed and what is left. Call it once, when you are done.",
            PullArgs,
            open_pull_request,
        ),
    ]


__all__ = ["NoArgs", "commit_changes", "writer_tools"]
