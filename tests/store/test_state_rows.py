"""Shared state rows: one JSON document per identity, rewritten atomically."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from agents.store import Store


def _bump(doc: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    n = doc.get("n", 0) + 1
    return n, {**doc, "n": n}


def test_an_identity_starts_empty_and_keeps_what_the_step_returns(store: Store) -> None:
    assert store.transact_state("a[bot]", lambda doc: (dict(doc), {"n": 1})) == {}
    assert store.transact_state("a[bot]", lambda doc: (dict(doc), doc)) == {"n": 1}
    assert store.transact_state("b[bot]", lambda doc: (dict(doc), doc)) == {}


def test_a_failing_step_changes_nothing(store: Store) -> None:
    store.transact_state("a[bot]", lambda doc: (None, {"n": 1}))

    def fail(doc: dict[str, Any]) -> tuple[None, dict[str, Any]]:
        raise RuntimeError("step failed")

    with pytest.raises(RuntimeError, match="step failed"):
        store.transact_state("a[bot]", fail)
    assert store.transact_state("a[bot]", lambda doc: (doc, doc)) == {"n": 1}


def test_concurrent_steps_on_one_identity_never_lose_an_update(store: Store) -> None:
    threads, rounds = 8, 25

    def run() -> None:
        for _ in range(rounds):
            store.transact_state("shared[bot]", _bump)

    pool = [threading.Thread(target=run) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert store.transact_state("shared[bot]", lambda doc: (doc["n"], doc)) == threads * rounds
