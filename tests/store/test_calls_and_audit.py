"""GitHub calls with the audit log of mutations, LLM calls, prompt prefixes, rate limits."""

from __future__ import annotations

from datetime import timedelta
from functools import partial

from agents.store import GitHubCall, LlmCall, Store
from agents.store.base import utcnow


def test_only_mutations_reach_the_audit_log(store: Store, worker: str) -> None:
    route = "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"
    on_the_pull = partial(
        GitHubCall,
        identity="swarm-bot[bot]",
        worker_id=worker,
        route=route,
        target="octo/demo#1",
    )
    store.record_github_call(on_the_pull(method="get", status=200, ratelimit_remaining=4999))
    store.record_github_call(on_the_pull(method="POST", status=201, ratelimit_remaining=4998))
    store.record_github_call(
        GitHubCall(
            identity="other[bot]",
            worker_id=None,
            method="DELETE",
            route="/installation/token",
            status=204,
        )
    )
    assert store.count_github_calls() == 3
    rows = store.audit("swarm-bot[bot]")
    assert len(rows) == 1
    row = rows[0]
    assert (row.method, row.route, row.target, row.status, row.ratelimit_remaining) == (
        "POST",
        route,
        "octo/demo#1",
        201,
        4998,
    )
    assert row.worker_id == worker
    assert [r.identity for r in store.audit()] == ["swarm-bot[bot]", "other[bot]"]
    assert store.audit("swarm-bot[bot]", since=utcnow() + timedelta(seconds=5)) == []


def test_llm_call_records_usage_and_flags_a_cache_miss(store: Store, worker: str) -> None:
    call = partial(
        LlmCall,
        worker_id=worker,
        model="claude-x",
        role_chain=["reviewer"],
        input_tokens=100,
        cache_write_tokens=0,
        output_tokens=20,
        cost=0.01,
        latency_ms=900,
        stop_reason="end_turn",
    )
    store.record_llm_call(call(prefix_hash="sha256:p", cache_read_tokens=0))
    store.record_llm_call(call(prefix_hash="sha256:p", cache_read_tokens=4000))
    calls = store.list_llm_calls(worker)
    assert [c.cache_miss for c in calls] == [True, False]
    assert calls[1].cache_read_tokens == 4000 and calls[1].role_chain == ["reviewer"]


def test_prompt_prefix_is_stored_once_per_hash_and_redacted(store: Store) -> None:
    body = "identity: swarm-bot\nAuthorization: Bearer abcdefghijkl\n"
    assert store.record_prompt_prefix("sha256:1", body) is True
    assert store.record_prompt_prefix("sha256:1", "other") is False
    stored = store.get_prompt_prefix("sha256:1")
    assert stored == "identity: swarm-bot\nAuthorization: [REDACTED:header]\n"
    assert store.get_prompt_prefix("sha256:none") is None


def test_rate_limit_snapshots_keep_pauses_and_per_worker_usage(store: Store, worker: str) -> None:
    reset = utcnow() + timedelta(minutes=30)
    store.record_rate_limit_snapshot(
        identity="swarm-bot[bot]",
        resource="core",
        limit=5000,
        remaining=10,
        reset_at=reset,
        paused_until=reset,
        by_worker={worker: 12},
    )
    [snap] = store.rate_limit_history("swarm-bot[bot]", "core")
    assert (snap.limit, snap.remaining, snap.by_worker) == (5000, 10, {worker: 12})
    assert snap.paused_until is not None
    assert abs((snap.paused_until - reset).total_seconds()) < 1


def test_latest_rate_limits_hold_the_newest_snapshot_per_identity_and_resource(
    store: Store,
) -> None:
    for identity, resource, remaining in [
        ("b[bot]", "core", 9),
        ("a[bot]", "graphql", 50),
        ("b[bot]", "core", 8),
        ("a[bot]", "core", 70),
        ("a[bot]", "core", 60),
    ]:
        store.record_rate_limit_snapshot(
            identity=identity, resource=resource, limit=100, remaining=remaining, reset_at=None
        )
    latest = [(r.identity, r.resource, r.remaining) for r in store.latest_rate_limits()]
    assert latest == [("a[bot]", "core", 60), ("a[bot]", "graphql", 50), ("b[bot]", "core", 8)]


def test_graphql_queries_are_not_audited_but_graphql_mutations_are(
    store: Store, worker: str
) -> None:
    store.record_github_call(
        GitHubCall(
            identity="bot[bot]", worker_id=worker, method="POST", route="/graphql", mutation=False
        )
    )
    store.record_github_call(
        GitHubCall(
            identity="bot[bot]",
            worker_id=worker,
            method="POST",
            route="/graphql",
            target="resolveThread",
            mutation=True,
        )
    )
    assert [r.target for r in store.audit("bot[bot]")] == ["resolveThread"]
