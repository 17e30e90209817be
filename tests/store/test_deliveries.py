"""Webhook delivery records on both backends: the first sight of an id or a body wins, and a
delivery's outcome written by two writers (the receiver saying "enqueued", the queued learner
saying "done") ends as the later news whichever writes first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agents.json_value import JSONObject
from agents.store import DeliveryEnd, NewDelivery, Store


def _record(store: Store, delivery: str, body: str = "b1") -> bool:
    return store.record_delivery(
        NewDelivery(delivery_id=delivery, body_sha256=body * 32, event="issue_comment")
    )


def test_a_delivery_id_or_body_seen_before_is_not_recorded_again(store: Store) -> None:
    assert _record(store, "d-1")
    assert not _record(store, "d-1", "b2")  # GitHub's redelivery
    assert not _record(store, "d-2")  # the same signed body replayed under another id


@pytest.mark.parametrize("learner_first", [True, False], ids=["learner-first", "receiver-first"])
def test_the_learners_outcome_is_kept_whichever_writer_comes_first(
    store: Store, learner_first: bool
) -> None:
    assert _record(store, "d-9")

    def receiver() -> None:
        store.finish_delivery(
            "d-9", DeliveryEnd("enqueued", "feedback", "q-1"), only_from=("received",)
        )

    def learner() -> None:
        store.finish_delivery(
            "d-9", DeliveryEnd("done", "1 proposed"), only_from=("received", "enqueued")
        )

    for write in (learner, receiver) if learner_first else (receiver, learner):
        write()

    record = store.get_delivery("d-9")
    assert record is not None and (record.outcome, record.detail) == ("done", "1 proposed")


def _accepted(store: Store, delivery: str, holder: str, until: datetime) -> None:
    work: JSONObject = {
        "kind": "review",
        "repo": "acme/widgets",
        "number": 1,
        "role": "r",
        "sender": "s",
    }
    assert store.record_delivery(
        NewDelivery(
            delivery_id=delivery,
            body_sha256=delivery.ljust(64, "0"),
            event="pull_request",
            work=work,
            claimed_by=holder,
            claimed_until=until,
        )
    )


def test_unfinished_work_of_a_lapsed_claim_is_taken_over_once_oldest_first(store: Store) -> None:
    now = datetime.now(UTC)
    for name in ("d-a", "d-b", "d-c"):
        _accepted(store, name, "dead:1:x", now - timedelta(seconds=1))
    _accepted(store, "d-live", "alive:2:y", now + timedelta(minutes=5))
    store.finish_delivery("d-c", DeliveryEnd("done", "reviewed"))
    store.finish_delivery("d-b", DeliveryEnd("running"), only_from=("received",))

    taken = store.take_over_deliveries("next:3:z", now + timedelta(minutes=1))

    assert [(r.delivery_id, r.outcome, r.attempts) for r in taken] == [
        ("d-a", "received", 2),
        ("d-b", "running", 2),
    ]
    assert store.take_over_deliveries("other:4:w", now + timedelta(minutes=1)) == []
    # A holder known dead loses its claim before it lapses.
    [dead] = store.take_over_deliveries(
        "next:3:z", now + timedelta(minutes=1), dead=lambda holder: holder == "alive:2:y"
    )
    assert dead.delivery_id == "d-live" and dead.claimed_by == "next:3:z"


def test_a_redelivery_takes_over_only_unfinished_unheld_work_of_the_same_body(
    store: Store,
) -> None:
    now = datetime.now(UTC)
    _accepted(store, "d-lost", "dead:1:x", now - timedelta(seconds=1))
    _accepted(store, "d-held", "alive:2:y", now + timedelta(minutes=5))
    _accepted(store, "d-done", "dead:1:x", now - timedelta(seconds=1))
    store.finish_delivery("d-done", DeliveryEnd("done"))
    until = now + timedelta(minutes=1)

    assert store.take_over_delivery("d-lost", "me:3:z", until, body_sha256="f" * 64) is None
    taken = store.take_over_delivery("d-lost", "me:3:z", until, body_sha256="d-lost".ljust(64, "0"))
    assert taken is not None and taken.claimed_by == "me:3:z"
    assert store.take_over_delivery("d-lost", "again:4:w", until) is None  # held now
    assert store.take_over_delivery("d-held", "me:3:z", until) is None
    assert store.take_over_delivery("d-done", "me:3:z", until) is None


def test_claims_are_renewed_only_for_their_holders_unfinished_work(store: Store) -> None:
    now = datetime.now(UTC)
    _accepted(store, "d-1", "me:1:x", now)
    _accepted(store, "d-2", "me:1:x", now)
    _accepted(store, "d-3", "you:2:y", now)
    store.finish_delivery("d-2", DeliveryEnd("failed", "boom"))
    assert store.renew_delivery_claims("me:1:x", now + timedelta(minutes=1)) == 1
    record = store.get_delivery("d-2")
    assert record is not None and record.claimed_until is None and record.finished_at
