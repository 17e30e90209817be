"""Feedback through the webhook path: a reply to the bot's review comment, delivered signed by the
sandbox to the real receiver, becomes a proposed learning within the delivery's handling, not at
the next run's poll. The receiver answers before any GitHub call (the learner is queued, and
records what it learned as the delivery's outcome); what counts follows authorship as in the
poll (write access teaches, others and bots do not), and feedback on a PR the bot never reviewed
starts nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from sandbox.github.feedback import reply
from sandbox.github.records import Rendezvous
from sandbox.github.seed import MAINTAINER, REVIEWER_BOT, WIDGETS, WIDGETS_PR_CLEAN
from sandbox.github.seed import WIDGETS_PR_DEBUG_PRINT as PR
from tests.events.harness import URL, Events, receiver_over
from tests.worker.conftest import Swarm, make_swarm

pytestmark = pytest.mark.anyio
__all__ = ["make_swarm"]

PR_COMMENTS = "/repos/{owner}/{repo}/pulls/{pull_number}/comments"
DISMISSAL = "False positive: this print is the CLI's output."


@pytest.fixture
async def reviewed(make_swarm: Callable[..., Swarm]) -> AsyncIterator[tuple[Swarm, Events]]:
    """The bot has reviewed PR 1 (inline comments on it); the receiver listens, as served."""
    swarm = make_swarm()
    assert (await swarm.review(WIDGETS, PR)).status == "succeeded"
    async with receiver_over(swarm.sandbox, swarm.runtime.store) as events:
        yield swarm, events
    await swarm.runtime.aclose()


def _finding(swarm: Swarm, word: str) -> Any:
    pull = swarm.sandbox.state.pull(WIDGETS, PR).pull
    assert pull is not None
    return next(c for c in pull.review_comments if c.user_login == REVIEWER_BOT and word in c.body)


def _proposals(swarm: Swarm) -> list[str]:
    found = swarm.runtime.store.list_memories(repo=WIDGETS, states=("proposed",))
    return [m.body for m in found]


async def test_a_signed_reply_is_answered_at_once_and_learned_from_in_the_background(
    reviewed: tuple[Swarm, Events],
) -> None:
    swarm, events = reviewed
    state = swarm.sandbox.state
    reply(state, WIDGETS, _finding(swarm, "print(").id, DISMISSAL, MAINTAINER)
    [delivery] = events.hooks.take()
    assert delivery.event == "pull_request_review_comment"
    # The learner's first read of the PR's comments waits until the test lets it go: the answer
    # must come while it waits.
    gate = Rendezvous("GET", PR_COMMENTS, parties=2, timeout_s=30)
    state.knobs.rendezvous = gate
    writes_before = len(events.bot_writes())

    response = await events.client.post(URL, content=delivery.body, headers=delivery.headers)

    assert (response.status_code, response.json()) == (202, {"status": "accepted"})
    assert _proposals(swarm) == [] and events.learner.running == 1
    gate.arrive()
    await events.learner.drain()
    [learned] = _proposals(swarm)
    assert learned.startswith(f"@{MAINTAINER} (admin access) dismissed the review finding")
    assert DISMISSAL in learned
    assert len(events.bot_writes()) == writes_before  # learning reads; it writes nothing
    record = events.store.get_delivery(delivery.delivery_id)
    assert record is not None
    # The maintainer may be answered: the responder run's end is the delivery's outcome.
    assert (record.event, record.outcome, record.number) == (
        "pull_request_review_comment",
        "done",
        PR,
    )
    assert record.detail == f"answer on {WIDGETS}#{PR}; feedback on {WIDGETS}#{PR}"
    # A redelivery of the same reply starts nothing, and the poll proposes nothing twice.
    again = await events.post(delivery)
    assert (again.status_code, again.json()["status"]) == (200, "duplicate")
    assert len(_proposals(swarm)) == 1


async def test_replies_from_people_without_write_access_and_from_bots_teach_nothing(
    reviewed: tuple[Swarm, Events],
) -> None:
    swarm, events = reviewed
    state = swarm.sandbox.state
    finding = _finding(swarm, "TODO").id
    reply(state, WIDGETS, finding, "won't fix, false positive", "carol-dev")  # no access
    reply(state, WIDGETS, finding, "false positive", "dependabot[bot]")
    outsider, bot = events.hooks.take()

    answers = [await events.post(outsider), await events.post(bot)]

    assert [a.status_code for a in answers] == [202, 200]
    assert answers[1].json()["reason"].endswith("replies from bots teach nothing")
    assert _proposals(swarm) == []
    record = events.store.get_delivery(outsider.delivery_id)
    assert record is not None and record.outcome == "done"
    # The learner read both replies on GitHub: neither teaches.
    assert record.detail == "0 learning(s) proposed, 0 accepted, 2 ignored"


async def test_feedback_on_a_pr_the_bot_never_reviewed_starts_nothing(
    reviewed: tuple[Swarm, Events],
) -> None:
    swarm, events = reviewed
    swarm.sandbox.state.add_comment(WIDGETS, WIDGETS_PR_CLEAN, "Thanks!", author=MAINTAINER)
    [delivery] = events.hooks.take()
    calls_before = len(swarm.sandbox.state.requests_by(REVIEWER_BOT))

    response = await events.post(delivery)

    assert response.status_code == 200
    assert response.json()["reason"].endswith(f"has not reviewed {WIDGETS}#{WIDGETS_PR_CLEAN}")
    assert len(swarm.sandbox.state.requests_by(REVIEWER_BOT)) == calls_before
    assert events.learner.running == 0


async def test_a_comment_on_a_reviewed_pr_reads_the_reactions_on_the_bots_findings(
    reviewed: tuple[Swarm, Events],
) -> None:
    from sandbox.github.feedback import grant, react

    swarm, events = reviewed
    state = swarm.sandbox.state
    grant(state, WIDGETS, "bob-dev", "write")
    # GitHub sends no event for a reaction; the next comment on the PR is when it is read.
    react(state, WIDGETS, _finding(swarm, "TODO").id, "-1", "bob-dev")
    state.add_comment(WIDGETS, PR, "The TODO is tracked elsewhere.", author="bob-dev")
    [delivery] = events.hooks.take()

    response = await events.post(delivery)

    assert response.status_code == 202
    [learned] = _proposals(swarm)
    assert learned.startswith("@bob-dev (write access)") and ":-1:" in learned


async def test_an_unsigned_reply_is_refused_and_teaches_nothing(
    reviewed: tuple[Swarm, Events],
) -> None:
    swarm, events = reviewed
    reply(swarm.sandbox.state, WIDGETS, _finding(swarm, "print(").id, DISMISSAL, MAINTAINER)
    [delivery] = events.hooks.take()

    response = await events.post(delivery, **{"X-Hub-Signature-256": "sha256=" + "0" * 64})

    assert (response.status_code, response.content) == (401, b"")
    assert events.store.get_delivery(delivery.delivery_id) is None
    assert _proposals(swarm) == []
