"""``swarm deliveries`` lists webhook deliveries with what became of each, the lost first."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from agents.json_value import JSONObject
from agents.store import DeliveryEnd, NewDelivery, Store
from tests.cli.conftest import swarm


def _accepted(store: Store, delivery: str, holder: str, until: datetime, number: int) -> None:
    work: JSONObject = {
        "kind": "review",
        "repo": "acme/widgets",
        "number": number,
        "role": "reviewer",
    }
    store.record_delivery(
        NewDelivery(
            delivery_id=delivery,
            body_sha256=delivery.ljust(64, "0"),
            event="pull_request",
            action="opened",
            repo="acme/widgets",
            number=number,
            work={**work, "sender": "octo"},
            claimed_by=holder,
            claimed_until=until,
        )
    )


def test_deliveries_lists_lost_and_unfinished_work_first_with_each_runs_end() -> None:
    now = datetime.now(UTC)
    with Store.open(None, Path(os.environ["SWARM_DATA_DIR"])) as store:
        _accepted(store, "d-lost", "gone:1:x", now - timedelta(minutes=1), 1)
        _accepted(store, "d-done", "here:2:y", now + timedelta(minutes=1), 2)
        _accepted(store, "d-held", "here:2:y", now + timedelta(minutes=1), 3)
        store.finish_delivery("d-done", DeliveryEnd("done", None, "fr-1", flow_state="Completed"))
        store.finish_delivery("d-held", DeliveryEnd("running"))

    seen = swarm("deliveries")

    assert seen.code == 0, seen.output
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in seen.lines if "│" in line]
    shown = [(row[0], row[4], row[5], row[6]) for row in cells if row and row[0].startswith("d-")]
    assert shown[2] == ("d-done", "done", "fr-1", "Completed")
    assert sorted(shown[:2]) == [
        ("d-held", "running by here:2:y", "-", "-"),
        ("d-lost", "LOST (received)", "-", "-"),
    ]


def test_deliveries_without_any_says_where_they_come_from() -> None:
    seen = swarm("deliveries")
    assert seen.code == 0, seen.output
    assert "swarm webhook serve" in seen.output
