"""An operator's outage: the receiver is down while GitHub (the sandbox) fails 20 deliveries; it
starts again, finds them in the App's delivery log and asks for each again, and each is done
exactly once, the commands included; a second pass does nothing. Over the real receiver, the
real store (both backends), the identity layer's App JWT against the sandbox's
``/app/hook/deliveries`` routes."""

from __future__ import annotations

import logging
import socket
from collections import Counter
from collections.abc import AsyncIterator

import pytest

from agents.events.routing import route_event
from agents.identity.minter import InstallationMinter
from agents.settings.model import load_settings
from flows.webhook.recovery import DeliveryRecovery
from flows.webhook.sink import flow_request
from sandbox.github.model import IssueComment
from sandbox.github.seed import MAINTAINER, READER, REVIEWER_BOT, WIDGETS, WRITER
from sandbox.github.webhooks import Delivery
from tests.events.harness import Events, events, sandbox_server

pytestmark = pytest.mark.anyio
__all__ = ["events", "sandbox_server"]


def _dead_url() -> str:
    """A receiver's URL where nothing listens (connection refused): the receiver is down."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/github/webhook"


async def _deliver(events: Events) -> list[int]:
    """What GitHub has to send, sent to the running receiver, each attempt in GitHub's log."""
    codes = []
    for delivery in events.hooks.take():
        answer = await events.post(delivery)
        events.hooks.record(delivery, answer.status_code, response=answer.text)
        codes.append(answer.status_code)
    return codes


@pytest.fixture
async def recovery(events: Events) -> AsyncIterator[DeliveryRecovery]:
    """As ``swarm webhook serve`` builds it: the default identity's App JWT, the store."""
    settings = load_settings()
    minter = InstallationMinter.from_identity(
        settings.identity("default"), "default", api_url=settings.github_api_url
    )
    try:
        yield DeliveryRecovery(minter, events.store, interval_s=60)
    finally:
        await minter.aclose()


def _outage(events: Events) -> tuple[list[Delivery], list[IssueComment]]:
    """20 events while the receiver is down: 6 PRs opened, 5 pushed to, 5 ``/swarm review``
    commands by people with write access, 4 issues opened. Each delivery fails."""
    state = events.state
    pulls = [
        state.add_pull(WIDGETS, f"Outage {i}", {f"src/widgets/o{i}.py": f"O = {i}\n"}).number
        for i in range(6)
    ]
    for i, number in enumerate(pulls[:5]):
        state.push_commit(WIDGETS, number, {f"src/widgets/o{i}.py": f"O = {i + 10}\n"})
    commands = [
        state.add_comment(WIDGETS, number, "/swarm review", author=(WRITER, MAINTAINER)[i % 2])
        for i, number in enumerate(pulls[:5])
    ]
    for i in range(4):
        state.add_issue(WIDGETS, f"Outage issue {i}", "It broke while nobody listened.")
    failed = events.hooks.pending[:]
    assert events.hooks.post_pending(_dead_url(), timeout=2.0) == [None] * 20
    return failed, commands


async def test_deliveries_failed_while_the_receiver_was_down_are_each_done_once_after_it_starts(
    events: Events, recovery: DeliveryRecovery
) -> None:
    # Before the outage the receiver took a delivery: the store's newest one.
    events.state.add_pull(WIDGETS, "Before", {"src/widgets/before.py": "B = 1\n"})
    assert await _deliver(events) == [202]
    before = len(events.started.requests)
    failed, commands = _outage(events)
    log = events.state.hook_log.of_app(events.hooks._app().id)
    assert [(a.status, a.status_code, a.redelivery) for a in log[:20]] == [
        ("failed to connect to host", 0, False)
    ] * 20

    first = await recovery.recover_once()
    assert (first.stopped, sorted(first.asked)) == (None, sorted(d.delivery_id for d in failed))
    # GitHub sends each again, under its own guid, signed; the receiver takes each.
    assert await _deliver(events) == [202] * 20

    started = events.started.requests[before:]
    expected = []
    for delivery in failed:
        work = route_event(delivery.event, delivery.body).work
        assert work is not None
        expected.append(flow_request(work, delivery.delivery_id))
    assert Counter(map(repr, started)) == Counter(map(repr, expected))
    assert [c.reactions for c in commands] == [[(REVIEWER_BOT, "eyes")]] * 5
    for delivery in failed:
        row = events.store.get_delivery(delivery.delivery_id)
        assert row is not None and row.outcome == "done", delivery.delivery_id

    # The second pass finds every guid in the store: it asks for nothing.
    asks = _redelivery_asks(events)
    second = await recovery.recover_once()
    assert (second.stopped, second.asked, second.waiting) == (None, [], [])
    assert _redelivery_asks(events) == asks
    assert events.hooks.take() == []
    assert len(events.started.requests) == before + 20


async def test_a_redelivery_of_a_delivery_already_done_stays_a_duplicate(
    events: Events, recovery: DeliveryRecovery
) -> None:
    events.state.add_issue(WIDGETS, "Done already", "Triaged once.")
    assert await _deliver(events) == [202]
    done = events.state.hook_log.of_app(events.hooks._app().id)[0]
    # Someone presses Redeliver on GitHub: the same guid again, marked a redelivery.
    events.state.hook_log.request_redelivery(done)
    [again] = events.hooks.take()
    answer = await events.post(again)
    events.hooks.record(again, answer.status_code, response=answer.text)
    assert (again.redelivery, answer.json()) == (True, {"status": "duplicate"})

    result = await recovery.recover_once()

    assert result.asked == []
    assert len(events.started.requests) == 1


async def test_a_command_from_someone_without_write_access_is_still_refused_after_recovery(
    events: Events, recovery: DeliveryRecovery
) -> None:
    events.state.add_issue(WIDGETS, "Before", "So the store has a delivery.")
    assert await _deliver(events) == [202]
    started = len(events.started.requests)
    comment = events.state.add_comment(WIDGETS, 3, "/swarm review", author=READER)
    assert events.hooks.post_pending(_dead_url(), timeout=2.0) == [None]

    assert len((await recovery.recover_once()).asked) == 1
    assert await _deliver(events) == [202]

    assert len(events.started.requests) == started
    assert comment.reactions == []


async def test_a_5xx_or_rate_limit_from_github_is_one_line_and_the_next_pass_recovers(
    events: Events, recovery: DeliveryRecovery, caplog: pytest.LogCaptureFixture
) -> None:
    events.state.add_issue(WIDGETS, "Before", "So the store has a delivery.")
    assert await _deliver(events) == [202]
    events.state.add_issue(WIDGETS, "During", "Sent while nobody listened.")
    assert events.hooks.post_pending(_dead_url(), timeout=2.0) == [None]
    events.state.inject_failure("/app/hook/deliveries", status=502)
    events.state.inject_failure(
        "/app/hook/deliveries/{delivery_id}/attempts", status=429, method="POST"
    )

    with caplog.at_level(logging.WARNING, logger="flows.webhook"):
        listing_failed = await recovery.recover_once()
        asking_failed = await recovery.recover_once()
    recovered = await recovery.recover_once()

    assert listing_failed.stopped is not None and "502" in listing_failed.stopped
    assert asking_failed.stopped is not None and "rate limit" in asking_failed.stopped
    assert len(recovered.asked) == 1
    assert await _deliver(events) == [202]
    assert len(events.started.requests) == 2
    lines = [r.getMessage() for r in caplog.records if "missed deliveries" in r.getMessage()]
    assert len(lines) == 2 and all("Traceback" not in line for line in lines)


def _redelivery_asks(events: Events) -> int:
    return sum(
        1
        for r in events.state.requests
        if r.method == "POST" and r.route == "/app/hook/deliveries/{delivery_id}/attempts"
    )
