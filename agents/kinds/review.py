"""Review a pull request: one review per PR and head, posted once, as the role's bot.

Started by the ``pull_request`` events that ask for a review, by ``/swarm`` with the role's
command word (a forced re-review), and by a scheduled run, which finds the open PRs needing the
role's review under each repository's ``.github/swarm.yaml``
(:func:`agents.planning.discover.discover_work`); the review key (PR, head, role) and the hidden
marker in the review body make it exactly-once. A review role also learns from the feedback on
its reviews, and its run polls the replies the respond kind answers when the same bot does both.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING

from agents.kinds.kind import Ask, Kind
from agents.planning.discover import Discovery, DiscoveryAsk, SkippedItem, discover_work
from agents.planning.shards import ReadPlan
from agents.planning.sources import (
    GatewayPullSource,
    GatewayReplySource,
    StoreLedger,
    read_review_feedback,
    repos_by_owner,
    role_identity,
)

if TYPE_CHECKING:
    from agents.planning.config_notice import ConfigNotice
    from agents.posting.notes import PullNote
    from agents.wiring import Runtime
    from agents.work import Task

log = logging.getLogger("swarm.planning")

# An invalid .github/swarm.yaml is told on the PRs it stops: a comment, and nothing else.
NOTICE_PERMISSIONS = {"metadata": "read", "pull_requests": "write"}


def read_plan(runtime: Runtime, role: str) -> ReadPlan:
    """What one of ``role``'s reviewers can read: the page sizes of its model's context tier and
    its role's turns (discovery lists files larger than that; planning cuts shards to it)."""
    from agents.llm.context import tier_for

    found = runtime.roles.get(role)
    model = (getattr(found, "model", None) or runtime.model_id) if found else runtime.model_id
    try:
        window = runtime.llm.registry.spec(model).context_window
    except Exception:  # an unknown model: the worker refuses it with its reason later
        window = 200_000
    tier = tier_for(window)
    turns = found.limits.max_turns if found is not None else 20
    return ReadPlan.of(tier.patch_page_chars, tier.file_page_chars, turns)


async def discover(runtime: Runtime, ask: Ask) -> Discovery:
    """Open PRs needing ``ask.role``'s review, read as the role's bot (never the maintainer),
    after reading the feedback on its earlier reviews."""
    from agents.kinds import respond
    from agents.kinds.book import RoleBook

    role, repos, targets = ask.role, ask.repos, ask.targets
    identity = role_identity(runtime, role)
    ledger = StoreLedger(runtime.store)
    items: list[Task] = []
    skipped: list[SkippedItem] = []
    config_errors: dict[str, list[str]] = {}
    told: list[str] = []
    notes: list[PullNote] = []
    sizes: dict[tuple[str, int], dict[str, int]] = {}
    # The replies poll rides on this discovery when the responder is the same bot: one token,
    # one identity proof, one listing of the open PRs and one read of the repository's review
    # comments (the learning poll's) per run instead of two (issue 23).
    responder = RoleBook(runtime.roles).role_for(respond.NAME)
    together = responder is not None and role_identity(runtime, responder) == identity
    replies: list[Task] = []
    for owned in repos_by_owner(repos).values():
        async with runtime.discovery(identity, owned) as (gateway, verified_login):
            feedback = await read_review_feedback(runtime, gateway, owned, role)
            pulls = GatewayPullSource(gateway)
            found = await discover_work(
                pulls,
                owned,
                DiscoveryAsk(
                    role,
                    posting_roles=(ask.summarizer_role,) if ask.summarizer_role else (),
                    bot_login=verified_login,
                    targets=targets,
                    rerun=ask.rerun,
                    known_roles=runtime.roles,
                    max_file_tokens=read_plan(runtime, role).max_file_tokens,
                    draft_authors_of=lambda: writer_logins(runtime),
                ),
                ledger,
            )
            if together:
                source = GatewayReplySource(
                    gateway, feedback, listings=pulls.listings, store=runtime.store
                )
                replies += (
                    await respond.replies_in(runtime, source, owned, verified_login, targets)
                ).replies
        items += found.items
        skipped += found.skipped
        notes += found.notes
        sizes.update(found.sizes)
        config_errors.update(found.config_errors)
        if found.config_notices and not runtime.dry_run:
            told += await post_config_notices(runtime, identity, found.config_notices)
    if not together:
        replies = (await respond.discover(runtime, ask)).replies
    return Discovery(
        items,
        skipped,
        config_errors,
        config_told=told,
        notes=notes,
        sizes=sizes,
        replies=replies,
        reply_role=responder,
    )


async def writer_logins(runtime: Runtime) -> frozenset[str]:
    """The bot logins of the configured roles whose kind writes code (its ceiling is
    ``writing``): their drafts are reviewed like any pull request. An identity that cannot say
    its login (no App configured for it) adds none."""
    from agents.kinds.book import RoleBook

    book = RoleBook(runtime.roles)
    logins: set[str] = set()
    for kind in book.kinds():
        if kind.ceiling != "writing":
            continue
        for role in book.of_kind(kind.name):
            try:
                logins.add(
                    await runtime.dispatcher.source(role_identity(runtime, role)).bot_login()
                )
            except Exception as exc:  # not configured, or GitHub cannot say: no exemption
                log.info("the writer role %s has no known bot login: %s", role, exc)
    return frozenset(logins)


async def post_config_notices(
    runtime: Runtime, identity: str, notices: Sequence[ConfigNotice]
) -> list[str]:
    """One comment per PR and version of an invalid ``.github/swarm.yaml``, as the role's bot
    with a token for those repositories that may comment and nothing more; the PRs told now.
    Only a verified bot posts (whose markers count rests on the login); a failure is logged,
    never the run's end."""
    from agents.planning.config_notice import post_notices
    from agents.redact import redact

    repos = [n.repo for n in notices]
    holder = f"notice-{uuid.uuid4().hex[:12]}"
    told: list[str] = []
    try:
        async with runtime.discovery(identity, repos, NOTICE_PERMISSIONS) as (gateway, login):
            if login is None:
                log.warning("config notices not posted: the bot's login is not verified")
                return told
            for notice in notices:
                done = await post_notices(
                    notice, gateway, runtime.store, holder=holder, bot_login=login
                )
                told += [f"{notice.repo}#{n}" for n, written in done.items() if written.posted]
    except Exception as exc:
        log.warning("config notices not posted: %s", redact(str(exc)))
    return told


def describe(task: Task) -> str:
    """A reviewer's task line: the PR at its head, what changed since the last review, its
    shard's files (quoted as data), and what the repository's configuration asks."""
    from agents.worker.prompt import quoted_names, repository_asks

    target = f"{task.repo}#{task.number}"
    sha = f" at head {task.head_sha}" if task.head_sha else ""
    text = f"Review pull request {target}{sha} and submit one review."
    if task.since_sha:
        text += f" Only the changes since the previously reviewed commit {task.since_sha} matter."
    if task.files and task.shard:
        text += (
            f" This worker covers part {task.shard.index + 1} of {task.shard.count}: only the "
            f"files {quoted_names(task.files)}; its findings are merged by another worker."
        )
    return text + repository_asks(task)


KIND = Kind(
    name="review",
    summary="Review a pull request and post one review, once per head",
    on="pulls",
    answers=frozenset({"review", "learn"}),
    discover=discover,
    task="review_pr",
    describe=describe,
)
