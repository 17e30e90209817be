"""Webhook delivery records on both backends: the first sight of an id or a body wins, and a
delivery's outcome written by two writers (the receiver saying "enqueued", the queued learner
saying "done") ends as the later news whichever writes first."""

from __future__ import annotations

import pytest

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
