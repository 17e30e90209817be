"""Retention prunes hidden runtime records only; transcripts render readably."""

from __future__ import annotations

from datetime import timedelta

from agents.store import GitHubCall, NewEvent, Store, render_transcript
from agents.store.base import utcnow
from tests.store.backends import record_llm_call


def test_prune_removes_runtime_records_and_leaves_memory_audit_and_workers(
    store: Store, worker: str
) -> None:
    store.append_events(worker, [NewEvent("progress", f"e{i}") for i in range(5)])
    store.record_github_call(
        GitHubCall(identity="bot", worker_id=worker, method="POST", route="/x")
    )
    record_llm_call(store, worker)
    store.record_rate_limit_snapshot(
        identity="bot", resource="core", limit=1, remaining=1, reset_at=None
    )
    memory = store.add_memory("fact", "keep me", author="alice", repo="octo/demo")
    store.add_agent_note(worker, "a note")

    assert store.prune(timedelta(days=1)).total == 0  # nothing is old enough yet
    counts = store.prune(timedelta(0))
    assert (counts.transcript_events, counts.github_calls, counts.llm_calls) == (5, 1, 1)
    assert counts.rate_limit_snapshots == 1
    assert store.get_transcript(worker) == []
    assert store.search_events(worker_id=worker, query="e1") == []
    assert store.get_memory(memory.id).body == "keep me"
    assert len(store.list_agent_notes(worker_id=worker)) == 1
    assert len(store.audit("bot")) == 1
    assert store.get_worker(worker).last_seq == 5
    assert store.append_event(worker, "progress", "after prune") == 6


def test_render_transcript_is_one_line_per_event_with_compact_tools(
    store: Store, worker: str
) -> None:
    store.append_events(
        worker,
        [
            NewEvent("user_turn", "Review PR #7 please"),
            NewEvent("tool_call", {"name": "get_diff", "input": {"pr": 7}}),
            NewEvent("tool_result", {"name": "get_diff", "status": "ok", "output": "x" * 5000}),
            NewEvent("assistant_turn", "Looks good", tokens=42, cost=0.0123),
        ],
    )
    text = render_transcript(store, worker)
    lines = text.splitlines()
    assert len(lines) == 4
    assert lines[0].startswith("#1 ") and "user_turn" in lines[0] and "Review PR #7" in lines[0]
    assert 'get_diff ok 5000B "xxxx' in lines[2] and len(lines[2]) < 200
    assert lines[3].endswith("Looks good (42 tok, $0.0123)")
    assert "x" * 5000 in render_transcript(store, worker, compact_tools=False)
    assert render_transcript(store, "w-none") == "(no events recorded for worker w-none)"
    assert utcnow().tzinfo is not None
