"""Against the sandbox GitHub on a compressed clock: the throttle uses the budget, never trips."""

from __future__ import annotations

import asyncio
import itertools
import math
from collections import Counter
from collections.abc import Callable

import pytest

from agents.github import ThrottleLimits
from sandbox.github.seed import MAINTAINER, REVIEWER_BOT, WIDGETS
from sandbox.github.state import SandboxState
from sandbox.server import SandboxServer
from tests.github.sandbox_helpers import (
    compressed_state,
    in_flight,
    reviewer_gateway,
    stepped_state,
)

pytestmark = pytest.mark.anyio

LIMIT = 150
WORKERS = 50
HOUR = 3600.0
WINDOWS_OBSERVED = 2


def fixed_windows(times: list[float], length: float) -> list[list[float]]:
    """Group request times the way GitHub's primary limit does: a window opens at the first
    request after the previous one ended and lasts ``length``."""
    windows: list[list[float]] = []
    for t in sorted(times):
        if not windows or t >= windows[-1][0] + length:
            windows.append([])
        windows[-1].append(t)
    return windows


async def test_fifty_workers_with_triple_demand_use_the_budget_without_a_single_limit_error(
    make_sandbox: Callable[[SandboxState], SandboxServer],
) -> None:
    # Virtual time: it stands still while requests are in flight, so the budget used per window
    # measures the throttle's pacing, not how fast a loaded machine gets requests out.
    sandbox_state, clock = stepped_state(core=LIMIT)
    server = make_sandbox(sandbox_state)
    state = server.state
    gateway = reviewer_gateway(server, clock=clock)
    demand_per_worker = 3 * LIMIT // WORKERS
    done: Counter[tuple[int, str]] = Counter()  # (window reset, worker) -> answers

    def window_reset() -> int:
        with state.lock:
            return state.limiter.status(REVIEWER_BOT, "core", clock.now()).reset

    async def worker(name: str) -> None:
        view = gateway.for_worker(name)
        for _ in range(demand_per_worker):
            await view.get_pull(WIDGETS, 1)
            done[(window_reset(), name)] += 1

    async with clock.driving(busy=lambda: in_flight(gateway)):
        await asyncio.gather(*(worker(f"w{i:02d}") for i in range(WORKERS)))
    await gateway.aclose()

    log = state.requests_by(REVIEWER_BOT)
    assert [r for r in log if r.status in (403, 429)] == []
    assert state.counter(REVIEWER_BOT).primary_limited == 0
    assert state.counter(REVIEWER_BOT).secondary_limited == 0
    assert state.requests_by(MAINTAINER) == []
    windows = fixed_windows([r.at for r in log], HOUR)
    assert len(windows) > WINDOWS_OBSERVED  # demand is three budgets: the last one is partial
    for window in windows[:WINDOWS_OBSERVED]:
        assert len(window) >= 0.9 * LIMIT, [len(w) for w in windows]
        reset = math.ceil(window[0] + HOUR)
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
    # Virtual time: requests arrive when the throttle sent them, so the default margin holds.
    sandbox_state, clock = stepped_state(content_per_window=10, content_per_hour=30)
    server = make_sandbox(sandbox_state)
    limits = ThrottleLimits(content_per_minute=10, content_per_hour=30)
    gateway = reviewer_gateway(server, limits=limits, clock=clock)

    async def worker(n: int) -> None:
        for i in range(5):
            await gateway.for_worker(f"w{n}").create_issue_comment(WIDGETS, 4, f"{n}.{i}")

    async with clock.driving(busy=lambda: in_flight(gateway)):
        await asyncio.gather(*(worker(n) for n in range(8)))
    await gateway.aclose()
    log = server.state.requests_by(REVIEWER_BOT)
    assert [r for r in log if r.status in (403, 429)] == []
    created = sorted(r.at for r in log if r.is_content_creation and r.status < 400)
    assert len(created) == 40
    for i, t in enumerate(created):
        assert sum(1 for u in created[i:] if u < t + 60) <= 10
        assert sum(1 for u in created[i:] if u < t + 3600) <= 30
    # ... and uses them: the last ten go out within two minutes of the hour reopening
    assert created[-1] - created[0] < 3600 + 120
