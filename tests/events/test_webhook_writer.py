"""The writer's starts through ``POST /github/webhook``: the ``swarm:implement`` label and the
``/swarm implement`` comment on an issue start one implement run only when the person who
acted may write (asked of GitHub as the bot before anything runs); from anyone else they start
nothing and write nothing."""

from __future__ import annotations

import pytest

from agents.kinds.implement import LABEL
from sandbox.github.seed import MAINTAINER, READER, WIDGETS, WIDGETS_ISSUE_BUG, WRITER
from sandbox.github.webhooks import Delivery
from tests.events.harness import Events, events, sandbox_server

pytestmark = pytest.mark.anyio
__all__ = ["events", "sandbox_server"]


def _labelled(events: Events, by: str, label: str = LABEL) -> Delivery:
    events.state.label_issue(WIDGETS, WIDGETS_ISSUE_BUG, label, by=by)
    [delivery] = [d for d in events.hooks.take() if d.event == "issues"]
    return delivery


def _implement_runs(events: Events) -> list[tuple[tuple[str, ...] | None, str]]:
    return [(r.targets, r.role) for r in events.started.requests]


@pytest.mark.parametrize("who", [MAINTAINER, WRITER], ids=["admin", "write access"])
async def test_the_implement_label_from_someone_who_may_write_starts_one_implement_run(
    events: Events, who: str
) -> None:
    delivery = _labelled(events, who)

    response = await events.post(delivery)

    assert response.status_code == 202, response.text
    assert _implement_runs(events) == [((f"{WIDGETS}#{WIDGETS_ISSUE_BUG}",), "implementer")]


@pytest.mark.parametrize(
    "who", [READER, "mallory-unknown"], ids=["read-only collaborator", "unknown user"]
)
async def test_the_implement_label_from_someone_who_may_not_write_starts_nothing(
    events: Events, who: str
) -> None:
    if who not in events.state.users:
        events.state.add_user(who)
    delivery = _labelled(events, who)

    response = await events.post(delivery)

    assert response.status_code == 202
    assert events.started.requests == []
    assert events.bot_writes() == []
    record = events.store.get_delivery(delivery.delivery_id)
    assert record is not None and record.outcome == "refused"


async def test_another_label_starts_nothing(events: Events) -> None:
    delivery = _labelled(events, MAINTAINER, label="help wanted")

    response = await events.post(delivery)

    assert response.json()["status"] == "ignored"
    assert events.started.requests == []


@pytest.mark.parametrize(
    ("who", "runs"),
    [(WRITER, [((f"{WIDGETS}#{WIDGETS_ISSUE_BUG}",), "implementer")]), (READER, [])],
    ids=["write access", "read-only collaborator"],
)
async def test_swarm_implement_on_an_issue_runs_only_for_someone_who_may_write(
    events: Events, who: str, runs: list[tuple[tuple[str, ...], str]]
) -> None:
    events.state.add_comment(WIDGETS, WIDGETS_ISSUE_BUG, "/swarm implement", author=who)
    [delivery] = events.hooks.take()

    await events.post(delivery)

    assert _implement_runs(events) == runs


@pytest.mark.parametrize("word", ["approve", "reject not like this"])
async def test_a_decision_with_no_plan_waiting_resumes_nothing_and_says_why(
    events: Events, word: str
) -> None:
    events.state.add_comment(WIDGETS, WIDGETS_ISSUE_BUG, f"/swarm {word}", author=WRITER)
    [delivery] = events.hooks.take()

    response = await events.post(delivery)

    assert response.status_code == 202
    assert events.started.requests == [], "a decision started a run"
    record = events.store.get_delivery(delivery.delivery_id)
    assert record is not None and record.outcome == "done"
    assert "no plan of the writer waits for a decision on this issue" in (record.detail or "")


async def test_a_readers_decision_is_ignored_without_a_reply(events: Events) -> None:
    events.state.add_comment(WIDGETS, WIDGETS_ISSUE_BUG, "/swarm approve", author=READER)
    [delivery] = events.hooks.take()

    await events.post(delivery)

    assert events.started.requests == [] and events.bot_writes() == []
    record = events.store.get_delivery(delivery.delivery_id)
    assert record is not None and record.outcome == "refused"
