"""Several processes sharing one identity through the store's state rows stay within one budget."""

from __future__ import annotations

import multiprocessing
import time
import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from agents.github import BudgetBackend, ThrottleLimits, classify_rest
from agents.ratelimit import Decision, RowBackend
from agents.ratelimit.github.buckets import BucketState, IdentityState, decide
from agents.ratelimit.github.readings import apply_bucket
from agents.store import Store
from tests.store.backends import fresh_pg_schema

READ = classify_rest("GET", "/repos/o/r/pulls/1")
# Only the primary budget should bind in this test.
LIMITS = ThrottleLimits(
    max_concurrency=10_000, rest_points_per_minute=1_000_000, pace_burst_min=10_000
)
BUDGET = 50
TRIES_PER_PROCESS = 40


@pytest.fixture
def pg_store_url(pg_url: str) -> Iterator[str]:
    with fresh_pg_schema(pg_url) as url:
        yield url


def _open(url: str) -> Store:
    return Store.open(url, Path("unused-data-dir"))


def _shared(store: Store) -> BudgetBackend:
    return RowBackend(IdentityState, store)


def _decide_read(state: IdentityState, *, rid: str, worker: str, now: float) -> Decision:
    return decide(state, READ, rid, worker, now, LIMITS)


def _grab(url: str, identity: str, worker: str, barrier: Any, out: Any) -> None:
    store = _open(url)
    backend = _shared(store)
    barrier.wait()
    granted = 0
    for i in range(TRIES_PER_PROCESS):
        rid = f"{worker}-{i}"
        decision = backend.transact(
            identity, partial(_decide_read, rid=rid, worker=worker, now=time.time())
        )
        granted += decision.granted
    store.close()
    out.put(granted)


def _seed(url: str, identity: str) -> None:
    store = _open(url)

    def seed(state: IdentityState) -> None:
        bucket = state.buckets.setdefault("core", BucketState())
        apply_bucket(bucket, BUDGET, BUDGET, 0, time.time() + 3600)

    _shared(store).transact(identity, seed)
    store.close()


def _run_two_processes(url: str) -> tuple[list[int], IdentityState]:
    identity = f"shared-{uuid.uuid4().hex[:8]}[bot]"
    _seed(url, identity)
    # fork: the children start at once instead of re-importing everything (slow on a busy box).
    ctx = multiprocessing.get_context("fork")
    barrier, out = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_grab, args=(url, identity, f"p{n}", barrier, out)) for n in (1, 2)]
    for p in procs:
        p.start()
    counts = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    with _open(url) as store:
        state = _shared(store).transact(identity, lambda s: s)
    return counts, state


def _assert_one_budget(counts: list[int], state: IdentityState) -> None:
    reserve = LIMITS.write_reserve(BUDGET)
    assert sum(counts) == BUDGET - reserve  # not a request more, not one less
    assert all(c > 0 for c in counts)  # both processes got a share
    assert sum(state.requests_by_worker.values()) == BUDGET - reserve


@pytest.mark.slow
def test_two_processes_on_sqlite_share_one_budget(tmp_path: Path) -> None:
    counts, state = _run_two_processes(f"sqlite:///{tmp_path / 'store.db'}")
    _assert_one_budget(counts, state)


@pytest.mark.slow
@pytest.mark.postgres
def test_two_processes_on_postgresql_share_one_budget(pg_store_url: str) -> None:
    counts, state = _run_two_processes(pg_store_url)
    _assert_one_budget(counts, state)


def test_state_survives_the_round_trip_through_the_table(tmp_path: Path) -> None:
    with Store.open(None, tmp_path) as store:
        backend = _shared(store)
        now = time.time()
        backend.transact("bot[bot]", lambda s: decide(s, READ, "r1", "w1", now, LIMITS))
        state = backend.transact("bot[bot]", lambda s: s)
    assert list(state.inflight) == ["r1"] and state.requests_by_worker == {"w1": 1}


# -- the same through the gateway, against the sandbox GitHub ------------------------------------

SANDBOX_LIMIT = 40
WORKERS_PER_PROCESS = 5
READS_PER_WORKER = 8  # two processes want 80 reads: twice one window's budget


def _reviewer_process(
    api_url: str, db_url: str, clock: Any, token: str, out: Any, barrier: Any
) -> None:
    import asyncio

    from agents.github import IdentityThrottle, ScaledClock
    from agents.github.gateway import GitHubGateway
    from sandbox.github.seed import REVIEWER_BOT, WIDGETS

    async def run() -> int:
        throttle = IdentityThrottle(
            REVIEWER_BOT,
            limits=ThrottleLimits(shared_poll_interval=2.0),
            clock=ScaledClock(clock.now, clock.speed),
            backend=_shared(store),
        )
        gateway = GitHubGateway(api_url, REVIEWER_BOT, lambda: token, throttle)
        done = 0

        async def worker(n: int) -> None:
            nonlocal done
            for _ in range(READS_PER_WORKER):
                await gateway.for_worker(f"{n}").get_issue(WIDGETS, 4)
                done += 1

        await asyncio.gather(*(worker(n) for n in range(WORKERS_PER_PROCESS)))
        await gateway.aclose()
        return done

    store = _open(db_url)
    barrier.wait()
    try:
        out.put(asyncio.run(run()))
    except Exception as exc:  # the parent reports it
        out.put(repr(exc))
    finally:
        store.close()


def _two_gateway_processes(db_url: str, make_sandbox: Any) -> None:
    from sandbox.github.clock import SandboxClock
    from sandbox.github.limits import RateLimits
    from sandbox.github.seed import MAINTAINER, REVIEWER_BOT, REVIEWER_INSTALLATION_ID
    from sandbox.github.state import SandboxState

    # Ten-minute windows passing in 3 real s.
    limits = RateLimits(core=SANDBOX_LIMIT, primary_window_s=600)
    state = SandboxState(clock=SandboxClock(speed=200), limits=limits)
    server = make_sandbox(state)
    token = state.mint_token(REVIEWER_INSTALLATION_ID)
    with state.lock:  # at 200x an hour is 18 real s, which a loaded machine can take to fork
        state.tokens[token].expires_at = None  # expiry is not what this test is about
    _open(db_url).close()  # migrated once, before the children race to it
    ctx = multiprocessing.get_context("fork")
    barrier, out = ctx.Barrier(2), ctx.Queue()
    args = (server.url, db_url, state.clock, token, out, barrier)
    procs = [ctx.Process(target=_reviewer_process, args=args) for _ in range(2)]
    for p in procs:
        p.start()
    results = [out.get(timeout=90) for _ in procs]
    for p in procs:
        p.join(timeout=30)
    assert results == [WORKERS_PER_PROCESS * READS_PER_WORKER] * 2
    log = state.requests_by(REVIEWER_BOT)
    assert [r for r in log if r.status in (403, 429)] == []
    assert state.counter(REVIEWER_BOT).primary_limited == 0
    assert len([r for r in log if r.status == 200]) == 2 * WORKERS_PER_PROCESS * READS_PER_WORKER
    assert state.requests_by(MAINTAINER) == []


@pytest.mark.slow
def test_two_gateway_processes_share_one_sandbox_budget_through_sqlite(
    tmp_path: Path, make_sandbox: Any
) -> None:
    _two_gateway_processes(f"sqlite:///{tmp_path / 'store.db'}", make_sandbox)


@pytest.mark.slow
@pytest.mark.postgres
def test_two_gateway_processes_share_one_sandbox_budget_through_postgresql(
    pg_store_url: str, make_sandbox: Any
) -> None:
    _two_gateway_processes(pg_store_url, make_sandbox)


def test_a_row_written_by_another_version_still_loads() -> None:
    row = {"paused_until": 5.0, "content_minute_tat": 1.0, "buckets": {}, "inflight": {}}
    state = IdentityState.from_dict(row)
    assert state.paused_until == 5.0 and state.content_log == []
