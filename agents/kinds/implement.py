"""Implement an issue: a draft pull request by the writer bot, on its own branch, tests run in the
sandbox, never merged or approved by it.

Started by the ``swarm:implement`` label added to an issue by someone with write access (the
``issues.labeled`` webhook; the sink asks GitHub, as the bot, before anything runs), by
``/swarm implement`` from such a person, and by a scheduled run, which finds the open issues
carrying the label with no draft pull request from the writer's branch yet, and checks who added
the label (the issue's events: anyone with triage access may label). What keys it for
exactly-once is the writer's branch (``swarm/issue-N``, one per issue) and the one open pull
request GitHub allows per branch, with the store's claim on the issue stopping a second worker
at the same moment (:mod:`agents.writer`). A run opens at most :data:`MAX_PER_RUN` of them.

The issue's text is untrusted data, like a PR author's: it reaches the model inside untrusted
delimiters, and nothing in it picks the branch, the test command or the files the writer may
change.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from agents.kinds.kind import Ask, Kind, Route
from agents.planning.discover import Discovery, SkippedItem
from agents.planning.sources import repos_by_owner, role_identity
from agents.work import WorkWords
from agents.writer.bench import branch_for, writer_bench

if TYPE_CHECKING:
    from agents.events.routing import Delivery, Routed
    from agents.github.gateway import GitHubGateway
    from agents.wiring import Runtime
    from agents.work import Task

NAME = "implement"
LABEL = "swarm:implement"
# Pull requests one run opens at most (gh-aw's create-pull-request defaults to 1 per run; a
# scheduled run over a backlog of labelled issues should not open dozens at once).
MAX_PER_RUN = 3
# Discovery lists issues, their events and the open pull requests of the writer's branches, asks
# who may write, and reads the default branch's .github/swarm.yaml for plan approval (once per
# repository with work); nothing more.
DISCOVERY_PERMISSIONS = {
    "metadata": "read",
    "issues": "read",
    "pull_requests": "read",
    "contents": "read",
}


def write_key(task: Task, role: str) -> str | None:
    """The store key of the writer's one pull request for the issue, per role."""
    if task.number is None or task.planning:
        return None  # a planning session writes nothing (plan approval)
    return f"{task.repo}#{task.number}/implement:{role}"


async def _issue_work(
    gateway: GitHubGateway,
    repo: str,
    found: Discovery,
    targets: set[int] | None,
) -> None:
    """One repository's issues to implement into ``found``: the labelled ones (or, when a
    person asked for some by number, those: the sink or the operator checked who asked)."""
    from agents.github.drafts import find_open_pull
    from agents.github.errors import GitHubApiError
    from agents.github.issues import labelled_by, labelled_open_issues, may_write
    from agents.work import RepoRules, Task
    from agents.writer.approval import approval_rules

    if targets is None:
        wanted: list[int] = []
        for issue in await labelled_open_issues(gateway, repo, LABEL):
            by = await labelled_by(gateway, repo, issue.number, LABEL)
            if by is None or not await may_write(gateway, repo, by):
                detail = f"added by {by}, who may not write" if by else "no one known added it"
                found.skipped.append(
                    SkippedItem(repo, issue.number, "", "label_not_by_writer", detail)
                )
                continue
            wanted.append(issue.number)
    else:
        wanted = []
        for number in sorted(targets):
            try:
                raw = await gateway.get_issue(repo, number)
            except GitHubApiError as exc:
                if exc.status == 404:
                    continue  # not an issue here: the run says it is not open
                raise
            if raw.get("state") == "open" and "pull_request" not in raw:
                wanted.append(number)
    rules: RepoRules | None = None
    for number in wanted:
        pull = await find_open_pull(gateway, repo, branch_for(number))
        if pull is not None:
            # Done: the run's report counts it with the items already done (Discovery).
            found.skipped.append(
                SkippedItem(repo, number, "", "pull_request_open", f"#{pull['number']}")
            )
            continue
        if rules is None:  # read once, and only for a repository with work
            rules = await approval_rules(gateway, repo)
        found.items.append(Task(kind="implement", repo=repo, number=number, rules=rules))


async def discover(runtime: Runtime, ask: Ask) -> Discovery:
    """The issues ``ask.role``'s writer has to implement, read as its bot; at most
    :data:`MAX_PER_RUN` become work, the rest wait for the next run."""
    identity = role_identity(runtime, ask.role)
    found = Discovery(items=[], skipped=[])
    asked: dict[str, set[int]] = {}
    for repo, number in ask.targets or ():
        asked.setdefault(repo.lower(), set()).add(number)
    for owned in repos_by_owner(ask.repos).values():
        async with runtime.discovery(identity, owned, DISCOVERY_PERMISSIONS) as (gateway, _):
            for repo in owned:
                targets = asked.get(repo.lower()) if ask.targets else None
                if ask.targets and not targets:
                    continue
                try:
                    await _issue_work(gateway, repo, found, targets)
                except Exception as exc:
                    found.skipped.append(SkippedItem(repo, 0, "", "unreadable", str(exc)))
    await _left_by_earlier_runs(runtime, ask.role, found)
    for task in found.items[MAX_PER_RUN:]:
        assert task.number is not None
        found.skipped.append(
            SkippedItem(task.repo, task.number, "", "run_cap", f"at most {MAX_PER_RUN} per run")
        )
    found.items = found.items[:MAX_PER_RUN]
    return found


async def _left_by_earlier_runs(runtime: Runtime, role: str, found: Discovery) -> None:
    """Issues the store says this role's writer opened a pull request for before are done,
    whatever GitHub lists now: a draft a person closed is an answer, not a reason to open
    another, and no worker is started only to find the store's record."""
    for task in list(found.items):
        key = write_key(task, role)
        record = await asyncio.to_thread(runtime.store.get_review_key, key) if key else None
        if record is None or record.state != "posted":
            continue
        assert task.number is not None
        found.items.remove(task)
        opened = f"#{record.review_id}" if record.review_id else "a pull request"
        found.skipped.append(
            SkippedItem(task.repo, task.number, "", "implemented_before", f"{opened} by {role}")
        )


def describe(task: Task) -> str:
    """The writer's task line: the issue, and the tools in the order they are used."""
    return (
        f"Implement issue {task.repo}#{task.number}: read it with get_issue, find and change "
        "the code in your working copy with the workspace tools, run the repository's tests "
        "with run_tests, then open one draft pull request with open_pull_request."
    )


def _labelled(d: Delivery) -> Routed:
    """``issues.labeled`` with the writer's label: work for the implement kind's role. Whether
    the person who added it may write is the sink's question (``writers_only``)."""
    raw: dict[str, Any] = d.raw if isinstance(d.raw, dict) else {}
    issue = raw.get("issue")
    issue = issue if isinstance(issue, dict) else {}
    label = raw.get("label")
    label = label if isinstance(label, dict) else {}
    number = issue.get("number")
    if not isinstance(number, int) or isinstance(number, bool) or number < 1:
        return d.ignored("no issue number")
    if label.get("name") != LABEL:
        return d.ignored(f"not the {LABEL} label", number)
    if issue.get("pull_request") is not None:
        return d.ignored("a pull request, not an issue", number)
    if issue.get("state", "open") != "open":
        return d.ignored("the issue is closed", number)
    role = d.answering(NAME, number)
    if not isinstance(role, str):
        return role
    work = d.asks(NAME, number, role)
    return d.work(work, f"implement {work.target}")


KIND = Kind(
    name=NAME,
    summary="Implement a labelled issue as one draft pull request by the writer bot",
    on="issues",
    answers=frozenset({NAME}),
    discover=discover,
    task="implement",
    describe=describe,
    routes=(Route("issues", frozenset({"labeled"}), _labelled),),
    writers_only=True,
    write_key=write_key,
    workbench=writer_bench,
    ceiling="writing",
    plan_approval=True,
    words=WorkWords(
        one="draft pull request",
        many="draft pull requests",
        posted="opened",
        done="already answered by a pull request",
        of="for",
        items="issue(s) to implement",
    ),
)
