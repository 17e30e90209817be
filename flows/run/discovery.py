"""Discovery as the flow runs it: owner by owner, as the role's bot, through the runtime.

Review roles get open pull requests needing their review (under each repository's
``.github/swarm.yaml``); the triager gets open issues its bot has not commented on yet.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING

from agents.planning.config_notice import ConfigNotice
from agents.planning.discover import Discovery, SkippedItem, discover_work
from agents.planning.replies import RESPONDER_ROLE
from agents.planning.shards import ReadPlan
from agents.posting.notes import PullNote
from agents.work import Task
from flows.run.adapters import (
    GatewayIssueSource,
    GatewayPullSource,
    GatewayReplySource,
    StoreLedger,
    read_review_feedback,
    repos_by_owner,
    role_identity,
)

if TYPE_CHECKING:
    from agents.wiring import Runtime

log = logging.getLogger("flows.run.discovery")

# An invalid .github/swarm.yaml is told on the PRs it stops: a comment, and nothing else.
NOTICE_PERMISSIONS = {"metadata": "read", "pull_requests": "write"}


# Skips the repository's .github/swarm.yaml decided: listed in the report with their reasons.
CONFIG_SKIPS = frozenset(
    {"role_disabled", "author_skipped", "label_skipped", "no_reviewable_files", "too_many_files"}
)


def config_skips(found: Discovery) -> list[str]:
    """``acme/widgets#3: reason: detail`` for each PR the repository's configuration skipped."""
    return [
        f"{s.repo}#{s.number}: {s.reason}" + (f": {s.detail}" if s.detail else "")
        for s in found.skipped
        if s.reason in CONFIG_SKIPS
    ]


def config_problems(found: Discovery) -> list[str]:
    """``acme/widgets: .github/swarm.yaml:4: ...`` for each problem of an invalid file."""
    from agents.redact import redact

    return [
        f"{repo}: {redact(problem)}"
        for repo, problems in found.config_errors.items()
        for problem in problems
    ]


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


def triages(runtime: Runtime, role: str) -> bool:
    """A role that comments on issues rather than reviewing pull requests."""
    found = runtime.roles.get(role)
    tools = set(getattr(found, "tools", ()) or ())
    return "submit_review" not in tools and "comment_issue" in tools


async def discover(
    runtime: Runtime,
    repos: Sequence[str],
    role: str,
    summarizer_role: str,
    targets: list[tuple[str, int]] | None,
    rerun: str | None,
) -> Discovery:
    """Open PRs needing ``role``'s review, read as the role's bot (never the maintainer), after
    reading the feedback on its earlier reviews."""
    identity = role_identity(runtime, role)
    if triages(runtime, role):
        return await _discover_triage(runtime, identity, repos, targets)
    if role == RESPONDER_ROLE:
        return await _discover_answers(runtime, repos, targets)
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
    together = (
        RESPONDER_ROLE in runtime.roles and role_identity(runtime, RESPONDER_ROLE) == identity
    )
    replies: list[Task] = []
    for owned in repos_by_owner(repos).values():
        async with runtime.discovery(identity, owned) as (gateway, verified_login):
            feedback = await read_review_feedback(runtime, gateway, owned, role)
            pulls = GatewayPullSource(gateway)
            found = await discover_work(
                pulls,
                owned,
                role,
                ledger,
                posting_roles=(summarizer_role,),
                bot_login=verified_login,
                targets=targets,
                rerun=rerun,
                known_roles=runtime.roles,
                max_file_tokens=read_plan(runtime, role).max_file_tokens,
            )
            if together:
                source = GatewayReplySource(
                    gateway, feedback, listings=pulls.listings, store=runtime.store
                )
                replies += (
                    await _replies_in(runtime, source, owned, verified_login, targets)
                ).replies
        items += found.items
        skipped += found.skipped
        notes += found.notes
        sizes.update(found.sizes)
        config_errors.update(found.config_errors)
        if found.config_notices and not runtime.dry_run:
            told += await post_config_notices(runtime, identity, found.config_notices)
    if not together:
        replies = (await _discover_answers(runtime, repos, targets)).replies
    return Discovery(
        items,
        skipped,
        config_errors,
        config_told=told,
        notes=notes,
        sizes=sizes,
        replies=replies,
    )


async def _discover_answers(
    runtime: Runtime, repos: Sequence[str], targets: list[tuple[str, int]] | None
) -> Discovery:
    """The replies the responder has to answer in its bot's threads (polled by every review
    run, and the whole of a responder run, which a reply's webhook starts); none when the
    responder role is not configured."""
    found = Discovery(items=[], skipped=[])
    if RESPONDER_ROLE not in runtime.roles:
        return found
    identity = role_identity(runtime, RESPONDER_ROLE)
    for owned in repos_by_owner(repos).values():
        async with runtime.discovery(identity, owned) as (gateway, verified_login):
            one = await _replies_in(
                runtime,
                GatewayReplySource(gateway, store=runtime.store),
                owned,
                verified_login,
                targets,
            )
        found.replies += one.replies
        found.skipped += one.skipped
    return found


async def _replies_in(
    runtime: Runtime,
    source: GatewayReplySource,
    owned: Sequence[str],
    verified_login: str | None,
    targets: list[tuple[str, int]] | None,
) -> Discovery:
    """One owner's replies to answer (and the PRs with none), read through ``source``."""
    from agents.planning.replies import discover_replies
    from agents.posting.keys import review_key_prefix

    def answered(key: str) -> bool:
        record = runtime.store.get_review_key(key)
        return record is not None and record.state == "posted"

    replies = await discover_replies(
        source,
        owned,
        bot_login=verified_login,
        answered=answered,
        targets=targets,
        reviewed=lambda repo, number: bool(
            runtime.store.posted_review_keys(review_key_prefix(repo, number))
        ),
        waits=source.waits,
        settled=source.settled,
    )
    asked = {(t.repo, t.number) for t in replies.items}
    skipped = [
        SkippedItem(repo, number, head, "nothing_to_answer")
        for repo, number, head in replies.looked_at
        if (repo, number) not in asked
    ]
    return Discovery(items=[], skipped=skipped, replies=replies.items)


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


async def _discover_triage(
    runtime: Runtime,
    identity: str,
    repos: Sequence[str],
    targets: list[tuple[str, int]] | None,
) -> Discovery:
    from agents.dispatch.dispatcher import TRIAGE_DISCOVERY_PERMISSIONS
    from agents.planning.triage import discover_triage

    found = Discovery(items=[], skipped=[])
    for owned in repos_by_owner(repos).values():
        async with runtime.discovery(identity, owned, TRIAGE_DISCOVERY_PERMISSIONS) as (
            gateway,
            verified_login,
        ):
            part = await discover_triage(
                GatewayIssueSource(gateway), owned, bot_login=verified_login, targets=targets
            )
        found.items += part.items
        found.skipped += part.skipped
    return found
