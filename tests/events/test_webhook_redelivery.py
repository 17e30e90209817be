"""GitHub's Redeliver after a receiver died: the delivery's work, recorded on its row before the
202 and never finished, runs when the same delivery comes again; finished work, work a live
receiver holds, and the same body under a new id are duplicates. Over the real receiver and
store (both backends), the sandbox's signed deliveries."""

from __future__ import annotations

import hashlib
import socket
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from agents.events.routing import route_event
from agents.store import NewDelivery
from flows.run.request import RunRequest
from sandbox.github.seed import WIDGETS
from sandbox.github.webhooks import Delivery
from tests.events.harness import Events, events, sandbox_server

pytestmark = pytest.mark.anyio
__all__ = ["events", "sandbox_server"]


def _gone_holder() -> str:
    """The holder name of a receiver process of this host that has ended."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    return f"{socket.gethostname()[:80]}:{dead.pid}:0123456789ab"


def _left_by(events: Events, delivery: Delivery, holder: str, outcome: str = "enqueued") -> None:
    """The row as a receiver left it when it died holding the delivery's work (waiting for a
    run slot: a row left ``running`` also has its flow run crashed, which needs Prefect, and is
    the operator's-bad-day test in tests/run/real_server)."""
    routed = route_event(delivery.event, delivery.body)
    assert routed.work is not None
    assert events.store.record_delivery(
        NewDelivery(
            delivery_id=delivery.delivery_id,
            body_sha256=hashlib.sha256(delivery.body).hexdigest(),
            event=delivery.event,
            outcome=outcome,
            work=routed.work.model_dump(mode="json"),
            claimed_by=holder,
            claimed_until=datetime.now(UTC) + timedelta(minutes=5),
        )
    )


def _opened(events: Events) -> tuple[int, Delivery]:
    number = events.state.add_pull(WIDGETS, "Add z", {"src/widgets/z.py": "Z = 1\n"}).number
    [delivery] = events.hooks.take()
    return number, delivery


async def test_a_redelivery_of_work_a_dead_receiver_never_finished_runs_it_once(
    events: Events,
) -> None:
    number, delivery = _opened(events)
    _left_by(events, delivery, _gone_holder())

    response = await events.post(delivery)

    assert (response.status_code, response.json()) == (202, {"status": "accepted"})
    assert events.started.requests == [RunRequest(targets=(f"{WIDGETS}#{number}",))]
    record = events.store.get_delivery(delivery.delivery_id)
    assert record is not None
    assert (record.outcome, record.attempts, record.claimed_until) == ("done", 2, None)
    # Finished now: GitHub's next Redeliver is a duplicate.
    again = await events.post(delivery)
    assert (again.status_code, again.json()) == (200, {"status": "duplicate"})
    assert len(events.started.requests) == 1


async def test_a_redelivery_of_work_a_live_receiver_holds_is_a_duplicate(events: Events) -> None:
    _, delivery = _opened(events)
    # Held by a receiver on another host whose claim has not lapsed: alive as far as anyone
    # here can tell, so its work is its own.
    _left_by(events, delivery, "another-host:4242:0123456789ab")

    answer = await events.post(delivery)

    assert (answer.status_code, answer.json()) == (200, {"status": "duplicate"})
    assert events.started.requests == []


async def test_the_same_body_under_a_new_id_is_a_duplicate_even_when_unfinished(
    events: Events,
) -> None:
    _, delivery = _opened(events)
    _left_by(events, delivery, _gone_holder())

    answer = await events.post(delivery, **{"X-GitHub-Delivery": "replayed-id-1"})

    assert (answer.status_code, answer.json()) == (200, {"status": "duplicate"})
    assert events.started.requests == []
    assert events.store.get_delivery("replayed-id-1") is None
