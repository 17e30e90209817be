"""Fix rounds: the writer answers what blocks its own pull request, at most N times.

A scheduled run of a ``fix`` role (the writer's identity) lists the writer bot's open pull
requests from its ``swarm/issue-N`` branches and reads where each one's rounds stand
(:mod:`agents.writer.rounds`), then, per pull request, in this order:

- a person with write access approved it: the loop is over (``approved_by_person``);
- its rounds are settled already (marked ready, or the open findings listed): nothing;
- the reviewer bot has not reviewed its head yet: wait (``waiting_for_review``);
- nothing blocks it: code marks it ready for review and asks the person who started the writer
  (who added the label) to review it, once (``marked_ready``);
- something blocks it and the rounds are spent (``writer.rounds``, or the last round at this very
  head changed nothing): code writes "Still open after N rounds" into its body, once
  (``rounds_exhausted``);
- else: a fix round, a worker on the branch head (:mod:`agents.writer.fixing`).

No model takes part in those code writes, and each is claimed in the store before it is made,
under a marker GitHub keeps, so a run cut off between any two of them and run again writes
nothing twice. Settings come from the base branch's ``.github/swarm.yaml`` only.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING, Any

from agents.kinds.kind import Ask, Kind
from agents.planning.discover import Discovery, SkippedItem
from agents.planning.sources import repos_by_owner, role_identity
from agents.work import Spend, WorkWords
from agents.writer.bench import BRANCH_PREFIX
from agents.writer.fixing import fix_bench

if TYPE_CHECKING:
    from agents.github.gateway import GitHubGateway
    from agents.github.models import Pull
    from agents.wiring import Runtime
    from agents.work import Task

log = logging.getLogger("swarm.planning")

NAME = "fix"
# Fix rounds one run starts at most; the rest wait for the next run.
MAX_PER_RUN = 3
# Reading the pull requests, their reviews and threads, the base branch's settings and who may
# write; writing is the ready mark, one comment and the body's list (pull_requests: write).
DISCOVERY_PERMISSIONS = {
    "metadata": "read",
    "contents": "read",
    "issues": "read",
    "pull_requests": "write",
}
READ_PERMISSIONS = {**DISCOVERY_PERMISSIONS, "pull_requests": "read"}


def write_key(task: Task, role: str) -> str | None:
    """The store key of the fix round answering the review of the task's head."""
    from agents.writer.rounds import round_key

    if task.number is None or not task.head_sha:
        return None
    return round_key(task.repo, task.number, role, task.head_sha)


async def reviewer_logins(runtime: Runtime) -> frozenset[str]:
    """The bot logins of the configured review roles: only their findings count."""
    from agents.kinds.book import RoleBook

    book = RoleBook(runtime.roles)
    logins: set[str] = set()
    for role in book.of_kind("review"):
        try:
            logins.add(await runtime.dispatcher.source(role_identity(runtime, role)).bot_login())
        except Exception as exc:  # not configured: its findings are not read
            log.info("the review role %s has no known bot login: %s", role, exc)
    return frozenset(logins)


async def discover(runtime: Runtime, ask: Ask) -> Discovery:
    """The writer's pull requests with a fix round to do, read as the writer's bot; the code
    writes that settle a pull request (ready, or the list of what is left) are made here."""
    identity = role_identity(runtime, ask.role)
    found = Discovery(items=[], skipped=[])
    reviewers = await reviewer_logins(runtime)
    wanted = READ_PERMISSIONS if runtime.dry_run else DISCOVERY_PERMISSIONS
    asked = {(r.lower(), n) for r, n in ask.targets or ()}
    for owned in repos_by_owner(ask.repos).values():
        async with runtime.discovery(identity, owned, wanted) as (gateway, login):
            for repo in owned:
                try:
                    await _repo_work(runtime, gateway, repo, ask.role, login, reviewers, found)
                except Exception as exc:
                    found.skipped.append(SkippedItem(repo, 0, "", "unreadable", str(exc)))
    if asked:
        found.items = [t for t in found.items if (t.repo.lower(), t.number) in asked]
    for task in found.items[MAX_PER_RUN:]:
        assert task.number is not None
        found.skipped.append(
            SkippedItem(task.repo, task.number, "", "run_cap", f"at most {MAX_PER_RUN} per run")
        )
    found.items = found.items[:MAX_PER_RUN]
    return found


async def _writer_pulls(gateway: GitHubGateway, repo: str, login: str) -> list[Pull]:
    """The open pull requests the writer bot opened from its own issue branches."""
    from agents.github.paths import repo_name

    pulls: list[Pull] = []
    for page in range(1, 4):
        response = await gateway.request(
            "GET",
            f"/repos/{repo_name(repo)}/pulls",
            params={"state": "open", "per_page": 100, "page": page},
        )
        listed = response.json()
        if not isinstance(listed, list):
            break
        page_pulls: list[Pull] = listed
        pulls += [p for p in page_pulls if isinstance(p, dict)]
        if len(listed) < 100:
            break
    owner = repo.split("/", 1)[0].lower()
    return [
        p
        for p in pulls
        if (p.get("user") or {}).get("login") == login
        and str((p.get("head") or {}).get("ref") or "").startswith(BRANCH_PREFIX)
        and str(((p.get("head") or {}).get("repo") or {}).get("full_name") or repo)
        .split("/", 1)[0]
        .lower()
        == owner
    ]


async def _repo_work(
    runtime: Runtime,
    gateway: GitHubGateway,
    repo: str,
    role: str,
    login: str | None,
    reviewers: frozenset[str],
    found: Discovery,
) -> None:
    from agents.github.branches import branch_head
    from agents.planning.repo_config import RepoConfig, config_at
    from agents.work import Task
    from agents.writer.rounds import ready_key, round_state, stopped_key

    if login is None:
        found.skipped.append(SkippedItem(repo, 0, "", "unreadable", "the bot is not verified"))
        return
    configs: dict[str, RepoConfig] = {}
    for pull in await _writer_pulls(gateway, repo, login):
        number = int(pull["number"])
        head = str(pull["head"]["sha"])
        base = str(pull["base"]["ref"])
        store = runtime.store
        settled = [
            k
            for k in (ready_key(repo, number, role), stopped_key(repo, number, role))
            if (r := await asyncio.to_thread(store.get_review_key, k)) and r.state == "posted"
        ]
        if settled:
            found.skipped.append(SkippedItem(repo, number, head, "fix_rounds_done", None))
            continue
        if base not in configs:
            # An invalid file skips the repository (discover says why): unreadable, as GitHub's
            # errors other than a missing file are.
            sha = await branch_head(gateway, repo, base)
            configs[base] = await config_at(gateway, repo, sha or base)
        rules = configs[base].writer
        if rules.rounds == 0:
            found.skipped.append(
                SkippedItem(repo, number, head, "fix_rounds_off", "writer.rounds is 0 here")
            )
            continue
        state = await round_state(
            gateway,
            store,
            repo,
            pull,
            role=role,
            reviewers=reviewers,
            blocking=rules.blocking,
            bots=(login,),
        )
        if state.approved_by:
            found.skipped.append(
                SkippedItem(
                    repo,
                    number,
                    head,
                    "approved_by_person",
                    f"approved by {state.approved_by}: the fix rounds end",
                )
            )
            continue
        if state.reviewed_head != head:
            found.skipped.append(
                SkippedItem(
                    repo,
                    number,
                    head,
                    "waiting_for_review",
                    f"waiting for the reviewer's review of {head[:12]}",
                )
            )
            continue
        if not state.findings:
            await _ready(runtime, gateway, repo, pull, role, login)
            found.skipped.append(SkippedItem(repo, number, head, "marked_ready", None))
            continue
        spent = Spend(
            cost_usd=sum(r.cost_usd for r in state.done),
            model_calls=sum(r.turns for r in state.done),
        )
        if (
            len(state.done) >= rules.rounds
            or state.round_at_head() is not None
            or _budget_spent(runtime, role, spent)
        ):
            await _stop(runtime, gateway, repo, pull, role, state)
            found.skipped.append(
                SkippedItem(
                    repo,
                    number,
                    head,
                    "rounds_exhausted",
                    f"still open after {len(state.done)} round(s): {len(state.findings)} "
                    "finding(s) listed in its body",
                )
            )
            continue
        found.items.append(
            Task(
                kind="fix",
                repo=repo,
                number=number,
                head_sha=head,
                base_sha=str(pull["base"].get("sha") or "") or None,
                reviewers=tuple(sorted(reviewers)),
                budget_spent=spent,
            )
        )


def _budget_spent(runtime: Runtime, role: str, spent: Spend) -> bool:
    """Whether the earlier rounds spent the role's cost or turn cap: its caps cover every round
    of a pull request, so no round starts with nothing left to spend."""
    found = runtime.roles.get(role)
    if found is None:
        return False
    limits = found.limits
    return spent.cost_usd >= limits.max_cost_usd or spent.model_calls >= limits.max_turns


def _holder() -> str:
    return f"fix-discovery-{uuid.uuid4().hex[:12]}"


async def _ready(
    runtime: Runtime,
    gateway: GitHubGateway,
    repo: str,
    pull: Pull,
    role: str,
    login: str,
) -> None:
    """Mark the draft ready for review, then ask the person who started the writer to review
    it, once. A run cut off between the two finds the pull request ready and writes the
    comment; the comment's key and marker keep it to one."""
    from agents.github.drafts import mark_ready
    from agents.github.issues import labelled_by, may_write
    from agents.kinds.implement import LABEL
    from agents.writer.approval import BotComments
    from agents.writer.rounds import ready_key

    if runtime.dry_run:
        return
    number = int(pull["number"])
    if pull.get("draft"):
        await mark_ready(gateway, str(pull["node_id"]))
    issue = int(str(pull["head"]["ref"])[len(BRANCH_PREFIX) :] or 0)
    person = await labelled_by(gateway, repo, issue, LABEL) if issue else None
    if person is not None and not await may_write(gateway, repo, person):
        person = None
    key = ready_key(repo, number, role)
    asked = f"@{person}, " if person else ""
    text = (
        f"{asked}the reviewer bot finds nothing blocking at this head, so this pull request is "
        "ready for review. Please review it: the writer never merges or approves its own work."
    )
    bot = BotComments(runtime.store, gateway, login, holder=_holder())
    await bot.once(repo, number, key, text, mentions=(person,) if person else ())


async def _stop(
    runtime: Runtime,
    gateway: GitHubGateway,
    repo: str,
    pull: Pull,
    role: str,
    state: Any,
) -> None:
    """Write what is still open into the body, once, and stop."""
    from agents.github.drafts import update_body
    from agents.posting.once import write_once
    from agents.writer.body import STOPPED_MARK, with_still_open
    from agents.writer.rounds import stopped_key

    if runtime.dry_run:
        return
    number = int(pull["number"])
    key = stopped_key(repo, number, role)
    url = str(pull.get("html_url") or "")

    async def find() -> dict[str, Any] | None:
        now = await gateway.get_pull(repo, number)
        said = STOPPED_MARK in str(now.get("body") or "")
        return {"id": number, "html_url": url} if said else None

    async def create() -> dict[str, Any]:
        await update_body(
            gateway, repo, number, with_still_open(state.body, state.findings, len(state.done))
        )
        return {"id": number, "html_url": url}

    await write_once(
        runtime.store, key, _holder(), find=find, create=create, alive=lambda _claim: False
    )


def describe(task: Task) -> str:
    """The fixer's task line: the pull request and head, and the tools in order."""
    return (
        f"Fix what blocks pull request {task.repo}#{task.number} at head {task.head_sha}: read "
        "the blocking findings with get_findings (a person's words come first), change the "
        "code in your working copy with the workspace tools, run the tests with run_tests, "
        "then call push_fix once with a short title and an answer for every finding."
    )


KIND = Kind(
    name=NAME,
    summary="Answer the reviewer's blocking findings on the writer's own pull request",
    on="pulls",
    discover=discover,
    task="fix",
    describe=describe,
    write_key=write_key,
    workbench=fix_bench,
    ceiling="writing",
    words=WorkWords(
        one="fix round",
        many="fix rounds",
        posted="pushed",
        done="already answered at this head",
        of="on",
        items="pull request(s) to fix",
    ),
)
