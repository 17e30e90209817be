"""history_search: the caller's own session only, bounded, paged, cited and redacted."""

from __future__ import annotations

import base64
import os

import pytest

from agents.memory import HistorySearchError, format_hits, history_search
from agents.store import NewEvent, NewWorker, Store


def _session(store: Store, run_id: str, texts: list[str]) -> str:
    worker_id = store.create_worker(NewWorker(run_id, role_chain=["reviewer"], status="running"))
    store.append_events(worker_id, [NewEvent("assistant_turn", t) for t in texts])
    return worker_id


def test_search_returns_only_the_callers_session_newest_first_with_citations(
    store: Store,
) -> None:
    run_id = store.create_run("t")
    me = _session(store, run_id, ["checked the parser", "parser needs a test", "done"])
    other = _session(store, run_id, ["parser in other session"])
    hits = history_search(store, me, "parser")
    assert [h.citation for h in hits] == [f"worker:{me}#2", f"worker:{me}#1"]
    assert all(h.worker_id == me for h in hits)
    assert hits[0].excerpt == "parser needs a test"
    assert history_search(store, other, "checked") == []


def test_limit_defaults_to_ten_is_capped_at_fifty_and_rejects_zero(store: Store) -> None:
    me = _session(store, store.create_run("t"), [f"event {i}" for i in range(60)])
    assert len(history_search(store, me)) == 10
    assert len(history_search(store, me, limit=500)) == 50
    with pytest.raises(HistorySearchError) as err:
        history_search(store, me, limit=0)
    assert str(err.value) == "limit must be between 1 and 50, got 0"


def test_before_seq_pages_back_without_overlap(store: Store) -> None:
    me = _session(store, store.create_run("t"), [f"note {i}" for i in range(25)])
    first = history_search(store, me, "note", limit=10)
    second = history_search(store, me, "note", limit=10, before_seq=first[-1].seq)
    assert [h.seq for h in first] == list(range(25, 15, -1))
    assert [h.seq for h in second] == list(range(15, 5, -1))
    assert f"before_seq={first[-1].seq}" in format_hits(first)


def test_tool_events_are_hidden_by_default_and_summarised_when_asked(store: Store) -> None:
    me = _session(store, store.create_run("t"), ["fetching the diff"])
    blob = base64.b64encode(os.urandom(600)).decode()
    store.append_events(
        me,
        [
            NewEvent("tool_call", {"name": "get_file", "input": {"path": "logo.png"}}),
            NewEvent(
                "tool_result",
                {
                    "name": "get_file",
                    "status": "ok",
                    "output": f"{blob} see https://x.test/login?token=abc123 ghs_secret1",
                },
            ),
        ],
    )
    assert [h.kind for h in history_search(store, me)] == ["assistant_turn"]
    hits = history_search(store, me, include_tool_events=True)
    result = next(h for h in hits if h.kind == "tool_result")
    assert result.excerpt.startswith("get_file status=ok size=")
    assert len(result.excerpt) < 160
    text = format_hits(hits)
    assert blob[:40] not in text and "abc123" not in text and "ghs_secret1" not in text


def test_run_scope_needs_the_role_permission_and_then_spans_the_run(store: Store) -> None:
    run_id = store.create_run("t")
    me = _session(store, run_id, ["my parser work"])
    peer = _session(store, run_id, ["peer parser work"])
    _session(store, store.create_run("other"), ["parser elsewhere"])
    with pytest.raises(HistorySearchError) as err:
        history_search(store, me, "parser", scope="run")
    assert str(err.value) == "scope 'run' is not allowed for this worker's role; use 'session'"
    hits = history_search(store, me, "parser", scope="run", allow_run_scope=True)
    assert sorted(h.worker_id for h in hits) == sorted([me, peer])


def test_query_words_match_inside_paths_the_same_on_both_backends(store: Store) -> None:
    me = _session(store, store.create_run("t"), ["edited src/foo_bar.py and docs/guide.md"])
    for query in ["foo", "bar py", "guide.md", "src/foo_bar.py"]:
        assert [h.seq for h in history_search(store, me, query)] == [1], query
    assert history_search(store, me, "missing") == []
    assert history_search(store, me, 'AND OR NEAR "*') == []
