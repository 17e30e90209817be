"""Frozen snapshot at worker start, per-turn recall, and append-only agent notes."""

from __future__ import annotations

import dataclasses

import pytest

from agents.memory import AgentMemory, frozen_snapshot, recall
from agents.store import Store


def test_snapshot_is_byte_stable_and_does_not_change_when_memory_is_edited(store: Store) -> None:
    fact = store.add_memory(
        "fact", "Wants tests for every bug fix", author="alice", repo="octo/demo"
    )
    store.add_memory("fact", "Be brief", author="alice")
    snap = frozen_snapshot(store, "octo/demo", "reviewer")
    again = frozen_snapshot(store, "octo/demo", "reviewer")
    assert (snap.text, snap.hash) == (again.text, again.hash)
    assert snap.text.splitlines() == [
        '<memory repo="octo/demo" role="reviewer">',
        f"- [fact #{fact.id}] Wants tests for every bug fix",
        f"- [fact #{fact.id + 1}] Be brief",
        "</memory>",
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        snap.text = "changed"  # type: ignore[misc]
    store.supersede_memory(fact.id, "Wants a regression test for every bug fix", author="bob")
    assert snap.text == again.text  # the session's snapshot is a value, not a live view
    assert frozen_snapshot(store, "octo/demo", "reviewer").hash != snap.hash


def test_snapshot_keeps_the_most_specific_memories_within_its_budget(store: Store) -> None:
    for i in range(20):
        store.add_memory("fact", f"global advice number {i} " + "x" * 50, author="alice")
    specific = store.add_memory(
        "fact", "repo and role advice", author="alice", repo="octo/demo", role="reviewer"
    )
    snap = frozen_snapshot(store, "octo/demo", "reviewer", max_chars=400)
    assert len(snap.text) <= 450
    assert snap.memory_ids[0] == specific.id
    assert snap.omitted > 0 and f"({snap.omitted} more not shown; use recall)" in snap.text


def test_empty_scope_says_so(store: Store) -> None:
    assert "(no memories for this scope)" in frozen_snapshot(store, None, None).text


def test_recall_returns_relevant_memories_and_notes_best_first(store: Store, worker: str) -> None:
    store.add_memory("fact", "Bug fixes need a regression test", author="alice", repo="octo/demo")
    store.add_memory("fact", "Release notes go in CHANGELOG", author="alice", repo="octo/demo")
    agent = AgentMemory(store, worker, repo="octo/demo", role="reviewer")
    agent.note("The flaky test in tests/api is known; ignore it")
    hits = recall(store, "is this bug fix missing a regression test?", "octo/demo", "reviewer")
    assert hits[0].source.startswith("memory:") and "regression test" in hits[0].text
    assert any(h.source.startswith("note:") for h in hits)
    assert all("CHANGELOG" not in h.text for h in hits)
    assert hits[0].cited == f"({hits[0].source}) {hits[0].text}"
    assert recall(store, "???", "octo/demo", "reviewer") == []


def test_agent_notes_are_append_only_and_continuity_takes_the_latest(
    store: Store, worker: str
) -> None:
    agent = AgentMemory(store, worker, run_id=store.get_worker(worker).run_id)
    assert agent.continuity() is None
    agent.note("first")
    agent.note("second")
    agent.save_continuity("reviewed 3 of 5 files")
    agent.save_continuity("reviewed 5 of 5 files; posting")
    assert [n.body for n in agent.notes()] == ["second", "first"]
    assert agent.continuity() == "reviewed 5 of 5 files; posting"
