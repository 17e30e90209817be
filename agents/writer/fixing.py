"""A fix round's bench: the writer's own pull request at the reviewed head, and what blocks it.

Set up by code before the first model call, as the writer bot: the pull request must still be
the writer bot's, open, from its ``swarm/issue-N`` branch, at the head discovery saw (a head that
moved since is the next run's work); the base branch's ``.github/swarm.yaml`` gives the tests,
the protected paths and caps, and ``writer.blocking``; the blocking findings are read again from
GitHub (:func:`agents.writer.rounds.round_state`), never taken from the model; the head is
fetched into a private temporary folder, as an implement session's is. The tools
(:mod:`agents.tools.fix_tools`) read the findings and push one commit with the answers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agents.github.branches import branch_head
from agents.outcome import WorkDone, WorkRefused
from agents.planning.repo_config import CONFIG_PATH
from agents.writer.bench import BRANCH_PREFIX, WriterBench, base_config, working_copy
from agents.writer.rounds import DoneRound, OpenFinding, round_state

if TYPE_CHECKING:
    from agents.tools.context import WorkerContext


@dataclass
class FixRound:
    """One round: the pull request, its number among the rounds, the findings it answers
    (people's first), the rounds before it, and whether it pushed (its one write)."""

    pull: int
    url: str
    number: int
    findings: list[OpenFinding]
    done: list[DoneRound]
    body: str
    pushed: bool = False
    answered: list[int] = field(default_factory=list)

    def briefing(self) -> str:
        return (
            f"This is fix round {self.number} on your own pull request #{self.pull}. Your "
            "working copy is its head. Read what blocks it with get_findings, fix what you "
            "can, run the tests, and answer every finding with push_fix."
        )


@asynccontextmanager
async def fix_bench(ctx: WorkerContext) -> AsyncIterator[None]:
    """Set up ``ctx``'s bench for one fix round; the working copy is removed after it."""
    task = ctx.task
    if task.number is None or not task.head_sha:
        raise WorkRefused("a fix task names no pull request and head")
    repo, gateway = task.repo, ctx.gateway
    pull = await gateway.get_pull(repo, task.number)
    login = ctx.bot_login or gateway.identity
    branch = str((pull.get("head") or {}).get("ref") or "")
    author = str((pull.get("user") or {}).get("login") or "")
    if author != login or not branch.startswith(BRANCH_PREFIX):
        raise WorkRefused(
            f"pull request #{task.number} is not the writer's own ({author}, {branch!r}): "
            "the writer fixes only the pull requests it opened from its branches"
        )
    url = str(pull.get("html_url") or "")
    if pull.get("state") != "open":
        raise WorkDone(f"pull request #{task.number} is closed", url)
    head = str(pull["head"]["sha"])
    if head != task.head_sha:
        raise WorkDone(
            f"the branch moved to {head[:12]} since the run looked; the next run looks again", url
        )
    base = str(pull["base"]["ref"])
    base_sha = await branch_head(gateway, repo, base)
    if base_sha is None:
        raise WorkRefused(f"the base branch {base!r} of {repo} has no head")
    config = await base_config(ctx, base_sha)
    if config.roles is not None and ctx.role_id not in config.roles:
        raise WorkRefused(f"{CONFIG_PATH} of {repo} does not list the role {ctx.role_id!r}")
    state = await round_state(
        gateway,
        ctx.store,
        repo,
        pull,
        role=ctx.role_id,
        reviewers=task.reviewers,
        blocking=config.writer.blocking,
        bots=(login,),
    )
    if state.reviewed_head != head or not state.findings:
        raise WorkDone("nothing blocks this head any more", url)
    async with working_copy(ctx, head, config, "swarm-fixer-") as workspace:
        ctx.bench = WriterBench(
            repo=repo,
            issue=int(branch[len(BRANCH_PREFIX) :] or 0),
            base=base,
            base_sha=str(pull["base"].get("sha") or base_sha),
            branch=branch,
            head=head,
            workspace=workspace,
            tests=config.tests,
            dry_run=ctx.dry_run,
            fixing=FixRound(
                pull=task.number,
                url=url,
                number=len([r for r in state.done if r.head != head]) + 1,
                findings=state.findings,
                done=state.done,
                body=state.body,
            ),
        )
        yield
