"""Two processes calling the model with one API key share its budget through the store's rows.

The scripted model (in this process, over loopback HTTP) meters the key like the provider; each
child process has its own LLMClient whose key throttle keeps its state in the store. Together
they ask for three times the key's per-minute input tokens and get not one 429.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from agents.llm.client import LLMClient
from agents.ratelimit import RowBackend, ScaledClock
from agents.ratelimit.anthropic.meters import KeyState
from agents.ratelimit.anthropic.throttle import KeyMetering
from agents.store import Store
from agents.store.schema import throttle_state
from sandbox.github.clock import SandboxClock
from sandbox.model import ScriptedModel, ScriptedServer
from sandbox.model.ratelimit import ProviderLimits, key_id
from tests.store.backends import fresh_pg_schema

KEY = "sk-ant-api03-TWOPROCESSES-do-not-leak"
INPUT_PER_MINUTE = 12_000
WORKERS_PER_PROCESS = 4
CALLS_PER_WORKER = 6  # 2 processes x 4 workers x 6 calls x 760 tokens: 3x the minute's budget


def _request(worker: str, n: int) -> dict[str, Any]:
    text = f"{worker} call {n}: " + "lorem ipsum " * 250
    return {
        "model": "claude-sonnet-4-6",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": text}],
    }


def _process(name: str, url: str, db_url: str, clock: SandboxClock, barrier: Any, out: Any) -> None:
    async def run() -> int:
        store = Store.open(db_url, Path("unused-data-dir"))
        client = LLMClient(
            api_key=KEY,
            base_url=url,
            metering=KeyMetering(
                clock=ScaledClock(clock.now, clock.speed),
                backend=RowBackend(KeyState, store, prefix="llm:"),
            ),
        )
        done = 0

        async def worker(w: int) -> None:
            nonlocal done
            for n in range(CALLS_PER_WORKER):
                await client.create(_request(f"{name}-w{w}", n), worker_id=f"{name}-w{w}")
                done += 1

        try:
            await asyncio.gather(*(worker(w) for w in range(WORKERS_PER_PROCESS)))
        finally:
            await client.aclose()
            store.close()
        return done

    barrier.wait()
    try:
        out.put((name, asyncio.run(run())))
    except Exception as exc:  # the parent reports it
        out.put((name, repr(exc)))


def _two_processes(db_url: str) -> None:
    Store.open(db_url, Path("unused-data-dir")).close()  # migrated before the children race
    clock = SandboxClock(speed=20)
    limits = ProviderLimits(input_tokens_per_minute=INPUT_PER_MINUTE)
    model = ScriptedModel(clock=clock.now, limits=limits)
    with ScriptedServer(model) as server:
        ctx = multiprocessing.get_context("fork")
        barrier, out = ctx.Barrier(2), ctx.Queue()
        procs = [
            ctx.Process(target=_process, args=(n, server.url, db_url, clock, barrier, out))
            for n in ("p1", "p2")
        ]
        for p in procs:
            p.start()
        results = dict(out.get(timeout=120) for _ in procs)
        for p in procs:
            p.join(timeout=30)
    assert results == {"p1": 24, "p2": 24}
    assert model.status_counts == {200: 48}  # not one 429
    record = model.limits.records[key_id(KEY)]
    assert record.admitted_input_tokens == 48 * 760 > 3 * INPUT_PER_MINUTE
    engine = sa.create_engine(db_url)
    with engine.connect() as conn:
        rows = conn.execute(sa.select(throttle_state)).all()
    engine.dispose()
    assert [row.identity.split(":")[0] for row in rows] == ["llm"]
    assert KEY not in repr(rows)  # the rows name the key by its fingerprint only


@pytest.fixture
def pg_store_url(pg_url: str) -> Iterator[str]:
    with fresh_pg_schema(pg_url) as url:
        yield url


@pytest.mark.slow
def test_two_processes_share_one_key_budget_on_sqlite(tmp_path: Path) -> None:
    _two_processes(f"sqlite:///{tmp_path / 'store.db'}")


@pytest.mark.slow
@pytest.mark.postgres
def test_two_processes_share_one_key_budget_on_postgresql(pg_store_url: str) -> None:
    _two_processes(pg_store_url)
