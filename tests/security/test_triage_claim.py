"""The triager's comment has a store claim of its own, like the review key: two triage runs of one
issue at the same moment (an ``issues`` webhook and a scheduled run) post exactly one comment,
on SQLite and on PostgreSQL. Both look for the bot's marker on GitHub before posting and
neither finds one (the sandbox lets their lookups meet), so only the claim stands between them.
"""

from __future__ import annotations

import asyncio

import pytest

from agents.posting.keys import comment_key
from agents.work import Task
from agents.worker.record import StoreRecorder
from sandbox.github.records import Rendezvous
from sandbox.github.seed import TRIAGE_BOT, WIDGETS, WIDGETS_ISSUE_DOCS
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio

ISSUE = WIDGETS_ISSUE_DOCS
COMMENTS = "/repos/{owner}/{repo}/issues/{issue_number}/comments"


def _task() -> Task:
    return Task(kind="triage_issue", repo=WIDGETS, number=ISSUE)


def _bot_comments(swarm: Swarm) -> list[str]:
    issue = swarm.sandbox.state.repo(WIDGETS).issues[ISSUE]
    return [c.body for c in issue.comments if c.user_login == TRIAGE_BOT]


async def test_two_triage_runs_at_the_same_moment_post_exactly_one_comment(
    two_swarms: tuple[Swarm, Swarm],
) -> None:
    first, second = two_swarms
    first.sandbox.state.knobs.rendezvous = Rendezvous("GET", COMMENTS, parties=2)
    sealed = [await s.dispatch(_task(), role="triager") for s in two_swarms]
    try:
        outcomes = await asyncio.gather(first.run(sealed[0]), second.run(sealed[1]))
    finally:
        for s in two_swarms:
            await s.runtime.aclose()

    [body] = _bot_comments(first)
    assert comment_key(WIDGETS, ISSUE, "triager") in body
    state = first.sandbox.state
    posts = [r for r in state.requests if r.method == "POST" and r.route == COMMENTS]
    assert len(posts) == 1
    lookups = [r for r in state.requests if r.method == "GET" and r.route == COMMENTS]
    assert len(lookups) >= 2  # both really looked, and found nothing, before one posted
    assert all(o.status == "succeeded" for o in outcomes), [o.reason for o in outcomes]
    record = first.runtime.store.get_review_key(comment_key(WIDGETS, ISSUE, "triager"))
    assert record is not None and record.state == "posted"


async def test_a_live_triagers_claim_stops_a_second_triager_from_commenting(
    two_swarms: tuple[Swarm, Swarm],
) -> None:
    first, second = two_swarms
    holder = await first.dispatch(_task(), role="triager")
    store = first.runtime.store
    StoreRecorder(store, holder.envelope.worker_id).register(holder, holder.envelope.roles.ids())
    key = comment_key(WIDGETS, ISSUE, "triager")
    assert store.claim_review_key(key, holder.envelope.worker_id)
    try:
        await second.run(await second.dispatch(_task(), role="triager"))
    finally:
        for s in two_swarms:
            await s.runtime.aclose()

    assert _bot_comments(first) == []
    record = store.get_review_key(key)
    assert record is not None and record.worker_id == holder.envelope.worker_id


async def test_a_crashed_triagers_claim_is_taken_over(swarm: Swarm) -> None:
    # A claim whose worker is no longer running (crashed before posting) does not block forever.
    key = comment_key(WIDGETS, ISSUE, "triager")
    assert swarm.runtime.store.claim_review_key(key, "w-crashed000000")

    outcome = await swarm.run(await swarm.dispatch(_task(), role="triager"))

    assert outcome.status == "succeeded", outcome.reason
    assert len(_bot_comments(swarm)) == 1
