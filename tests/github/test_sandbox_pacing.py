"""Against the sandbox GitHub on a compressed clock: the throttle uses the budget, never trips."""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from collections.abc import Callable

import pytest

from agents.github import ThrottleLimits
from sandbox.github.seed import MAINTAINER, REVIEWER_BOT, WIDGETS
from sandbox.github.state import SandboxState
from sandbox.server import SandboxServer
from tests.github.sandbox_helpers import compressed_state, reviewer_gateway

pytestmark = pytest.mark.anyio

LIMIT = 150
WORKERS = 50
WINDOW_REAL_S = 4.0
WINDOWS_OBSERVED = 2


async def test_fifty_workers_with_triple_demand_use_the_budget_without_a_single_limit_error(
    make_sandbox: Callable[[SandboxState], SandboxServer],
) -> None:
    server = make_sandbox(compressed_state(WINDOW_REAL_S, core=LIMIT))
    state, clock = server.state, server.state.clock
    gateway = reviewer_gateway(server)
    demand_per_worker = 3 * LIMIT // WORKERS
    done: Counter[tuple[int, str]] = Counter()  # (window reset, worker) -> answers
    peak_used: dict[int, int] = {}

    def window() -> tuple[int, int]:
        with state.lock:
            status = state.limiter.status(REVIEWER_BOT, "core", clock.now())
        return status.reset, status.used

    async def worker(name: str) -> None:
        view = gateway.for_worker(name)
        for _ in range(demand_per_worker):
            await view.get_pull(WIDGETS, 1)
            done[(window()[0], name)] += 1

    async def watch() -> None:
        while True:
            reset, used = window()
            if used:  # before a window opens its reset is "now + an hour" and moves
                peak_used[reset] = max(peak_used.get(reset, 0), used)
            await asyncio.sleep(0.005)

    watcher = asyncio.ensure_future(watch())
    workers = [asyncio.ensure_future(worker(f"w{i:02d}")) for i in range(WORKERS)]
    while not peak_used:  # the first window opens with the first request
        await asyncio.sleep(0.01)

    def finished_windows() -> list[int]:
        return sorted(r for r in peak_used if r < clock.now())

    while len(finished_windows()) < WINDOWS_OBSERVED:
        failed = [t for t in workers if t.done()]
        if failed:
            failed[0].result()  # a worker that stopped early shows why
            raise AssertionError("a worker finished before the windows were observed")
        await asyncio.sleep(0.05)
    full_windows = finished_windows()[:WINDOWS_OBSERVED]
    for task in [*workers, watcher]:
        task.cancel()
    await asyncio.gather(*workers, watcher, return_exceptions=True)
    await gateway.aclose()

    log = state.requests_by(REVIEWER_BOT)
    assert [r for r in log if r.status in (403, 429)] == []
    assert state.counter(REVIEWER_BOT).primary_limited == 0
    assert state.counter(REVIEWER_BOT).secondary_limited == 0
    assert state.requests_by(MAINTAINER) == []
    for reset in full_windows:
        assert peak_used[reset] >= 0.9 * LIMIT, peak_used
        progressed = {w for (r, w), n in done.items() if r == reset and n > 0}
        assert len(progressed) == WORKERS  # every worker moved forward in every window


async def test_mutations_are_serial_and_a_second_apart_on_the_sandbox_clock(
    make_sandbox: Callable[[SandboxState], SandboxServer],
) -> None:
    server = make_sandbox(compressed_state(60.0))  # a minute of GitHub time a real second
    gateway = reviewer_gateway(server)

    async def worker(n: int) -> None:
        view = gateway.for_worker(f"w{n}")
        await view.create_issue_comment(WIDGETS, 4, f"note {n}")
        await view.get_issue(WIDGETS, 4)
        await view.add_labels(WIDGETS, 4, [f"label-{n}"])

    await asyncio.gather(*(worker(n) for n in range(8)))
    await gateway.aclose()
    writes = sorted(r.at for r in server.state.requests_by(REVIEWER_BOT) if r.is_write)
    assert len(writes) == 16
    assert all(b - a >= 1.0 for a, b in itertools.pairwise(writes))


async def test_content_creation_stays_under_the_minute_and_hour_caps(
    make_sandbox: Callable[[SandboxState], SandboxServer],
) -> None:
    server = make_sandbox(compressed_state(4.0, content_per_window=10, content_per_hour=30))
    # An hour passes in 2 real s, so a few ms of latency are minutes of sandbox time.
    limits = ThrottleLimits(content_per_minute=10, content_per_hour=30, content_window_margin=120)
    gateway = reviewer_gateway(server, limits=limits)

    async def worker(n: int) -> None:
        for i in range(5):
            await gateway.for_worker(f"w{n}").create_issue_comment(WIDGETS, 4, f"{n}.{i}")

    await asyncio.gather(*(worker(n) for n in range(8)))
    await gateway.aclose()
    log = server.state.requests_by(REVIEWER_BOT)
    assert [r for r in log if r.status in (403, 429)] == []
    created = sorted(r.at for r in log if r.is_content_creation and r.status < 400)
    assert len(created) == 40
    for i, t in enumerate(created):
        assert sum(1 for u in created[i:] if u < t + 60) <= 10
        assert sum(1 for u in created[i:] if u < t + 3600) <= 30
