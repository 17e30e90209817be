"""Transcript appends: per-worker sequences, batching, read-back and redaction on write."""

from __future__ import annotations

import threading

import pytest

from agents.store import NewEvent, NewWorker, Store, StoreError, UnknownWorkerError
from tests.json_access import text as as_text


def test_append_event_numbers_events_from_one_per_worker(store: Store, worker: str) -> None:
    other = store.create_worker(NewWorker(store.get_worker(worker).run_id, role_chain=["triager"]))
    assert [store.append_event(worker, "user_turn", f"m{i}") for i in range(3)] == [1, 2, 3]
    assert store.append_event(other, "user_turn", "x") == 1
    assert store.get_worker(worker).last_seq == 3


def test_append_events_assigns_consecutive_sequences_in_one_batch(
    store: Store, worker: str
) -> None:
    store.append_event(worker, "user_turn", "start")
    seqs = store.append_events(
        worker,
        [
            NewEvent("assistant_turn", "thinking", tokens=12, cost=0.001),
            NewEvent("tool_call", {"name": "get_pr", "input": {"number": 7}}),
            NewEvent("tool_result", {"name": "get_pr", "status": "ok", "output": "diff"}),
        ],
    )
    assert seqs == [2, 3, 4]
    events = store.get_transcript(worker)
    assert [(e.seq, e.kind) for e in events] == [
        (1, "user_turn"),
        (2, "assistant_turn"),
        (3, "tool_call"),
        (4, "tool_result"),
    ]
    assert events[0].content == {"text": "start"}
    assert events[1].tokens == 12 and events[1].cost == pytest.approx(0.001)
    assert events[2].content == {"name": "get_pr", "input": {"number": 7}}
    assert events[0].citation == f"worker:{worker}#1"
    assert events[0].created_at.tzinfo is not None


def test_get_transcript_pages_after_a_sequence(store: Store, worker: str) -> None:
    store.append_events(worker, [NewEvent("progress", f"p{i}") for i in range(6)])
    page = store.get_transcript(worker, after_seq=2, limit=3)
    assert [e.seq for e in page] == [3, 4, 5]


def test_secrets_are_redacted_before_they_reach_the_table(store: Store, worker: str) -> None:
    token = "ghs_" + "x1Y2" * 40 + ".dotted"
    store.append_event(worker, "tool_result", {"name": "sh", "output": f"GITHUB_TOKEN={token}"})
    store.append_event(worker, "user_turn", "key sk-ant-api03-abcdef")
    text = str([e.content for e in store.get_transcript(worker)])
    assert token[:20] not in text and "sk-ant-api03" not in text
    assert "[REDACTED:" in text


def test_unknown_event_kind_is_refused_with_the_allowed_list(store: Store, worker: str) -> None:
    with pytest.raises(StoreError) as err:
        store.append_event(worker, "chat", "x")
    assert str(err.value) == (
        "event kind 'chat' is not one of: user_turn, assistant_turn, tool_call, tool_result, "
        "status, compaction, error, progress"
    )
    assert store.get_transcript(worker) == []


def test_appending_to_an_unknown_worker_fails_and_writes_nothing(store: Store) -> None:
    with pytest.raises(UnknownWorkerError, match="no worker with id 'w-missing'"):
        store.append_event("w-missing", "user_turn", "x")


def test_threads_appending_to_one_worker_get_unique_gap_free_sequences(
    store: Store, worker: str
) -> None:
    def append(tag: int) -> None:
        for i in range(10):
            store.append_events(worker, [NewEvent("progress", f"{tag}:{i}:{j}") for j in range(2)])

    threads = [threading.Thread(target=append, args=(t,)) for t in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    events = store.get_transcript(worker)
    assert [e.seq for e in events] == list(range(1, 121))
    for tag in range(6):  # each thread's own events stay in the order it wrote them
        mine = [said for e in events if (said := as_text(e.content["text"])).startswith(f"{tag}:")]
        assert mine == [f"{tag}:{i}:{j}" for i in range(10) for j in range(2)]


def test_appending_refreshes_the_worker_heartbeat(store: Store, worker: str) -> None:
    before = store.get_worker(worker).heartbeat_at
    store.append_event(worker, "progress", "alive")
    after = store.get_worker(worker).heartbeat_at
    assert before is not None and after is not None and after >= before
