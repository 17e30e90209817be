"""The throttle on its own (GitHub's answers fed in as headers): pacing, turns, secondary limits."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from agents.github import (
    Answer,
    IdentityThrottle,
    Permit,
    RequestSpec,
    ThrottleLimits,
    classify_rest,
)
from agents.ratelimit import Paused
from tests.github.helpers import BOT, ManualClock, rl_headers

pytestmark = pytest.mark.anyio

READ = classify_rest("GET", "/repos/o/r/pulls/1")
COMMENT = classify_rest("POST", "/repos/o/r/issues/1/comments")
LABEL = classify_rest("POST", "/repos/o/r/issues/1/labels")


class FakeGitHubBudget:
    """GitHub's side of one fixed window: counts requests and answers with the headers."""

    def __init__(self, limit: int, reset: float) -> None:
        self.limit, self.reset, self.used = limit, reset, 0

    def headers(self) -> dict[str, str]:
        self.used += 1
        return rl_headers(self.limit - self.used, limit=self.limit, reset=self.reset)


async def learn_budget(throttle: IdentityThrottle, github: FakeGitHubBudget) -> None:
    permit = await throttle.acquire("probe", READ)
    await throttle.settle(permit, Answer(200, github.headers()))


async def test_reads_are_spread_so_the_budget_lasts_until_the_reset() -> None:
    clock = ManualClock()
    start = clock.now()
    github = FakeGitHubBudget(limit=100, reset=start + 1000)
    throttle = IdentityThrottle(BOT, clock=clock)
    await learn_budget(throttle, github)
    grants: list[float] = []
    while True:
        permit = await throttle.acquire("w", READ)
        if permit.granted_at >= github.reset:
            break  # the next window: waited out the reset instead of overspending
        grants.append(permit.granted_at)
        await throttle.settle(permit, Answer(200, github.headers()))
    assert 95 <= github.used <= 100  # all of it but the reserve kept for writes
    first_half = sum(1 for t in grants if t < start + 500)
    assert 40 <= first_half <= 60  # spread, not burst


async def test_workers_take_turns_so_a_busy_worker_cannot_starve_another() -> None:
    clock = ManualClock()
    github = FakeGitHubBudget(limit=100, reset=clock.now() + 1000)
    throttle = IdentityThrottle(BOT, clock=clock)
    await learn_budget(throttle, github)
    order: list[str] = []

    async def one(worker: str) -> None:
        permit = await throttle.acquire(worker, READ)
        order.append(worker)
        await throttle.settle(permit, Answer(200, github.headers()))

    busy = [asyncio.ensure_future(one("busy")) for _ in range(20)]
    await asyncio.sleep(0)
    other = asyncio.ensure_future(one("other"))
    await asyncio.gather(*busy, other)
    assert order.index("other") <= 6  # FIFO would have put it 21st


async def test_mutations_are_serial_and_at_least_one_second_apart() -> None:
    clock = ManualClock()
    throttle = IdentityThrottle(BOT, clock=clock)
    spans: list[tuple[float, float]] = []

    async def post(worker: str) -> None:
        permit = await throttle.acquire(worker, LABEL)
        start = clock.now()
        await clock.sleep(0.3)  # the request travelling
        spans.append((start, clock.now()))
        await throttle.settle(permit, Answer(200, rl_headers(4000, reset=clock.now() + 3600)))

    await asyncio.gather(*(post(f"w{i}") for i in range(6)))
    spans.sort()
    for (_, prev_end), (next_start, _) in itertools.pairwise(spans):
        assert next_start >= prev_end + 1.0


async def test_content_creation_stays_under_the_per_minute_and_per_hour_caps() -> None:
    clock = ManualClock()
    limits = ThrottleLimits(min_write_interval=0.05, content_per_minute=80, content_per_hour=500)
    throttle = IdentityThrottle(BOT, limits=limits, clock=clock)
    starts: list[float] = []
    for _ in range(700):
        try:
            permit = await throttle.acquire("w", COMMENT)
        except Paused:
            raise AssertionError("content pacing must wait, not report a pause") from None
        starts.append(clock.now())
        await throttle.settle(permit, Answer(201, rl_headers(4000, reset=clock.now() + 7200)))
    for i, t in enumerate(starts):
        in_minute = sum(1 for u in starts[i:] if u < t + 60)
        in_hour = sum(1 for u in starts[i:] if u < t + 3600)
        assert in_minute <= 80 and in_hour <= 500


async def test_reads_stop_at_the_write_reserve_but_a_write_still_goes() -> None:
    clock = ManualClock()
    github = FakeGitHubBudget(limit=100, reset=clock.now() + 60)
    github.used = 94  # learn_budget makes it 95: 5 remaining
    throttle = IdentityThrottle(BOT, limits=ThrottleLimits(pace_burst_min=100), clock=clock)
    await learn_budget(throttle, github)
    for _ in range(3):
        await throttle.settle(await throttle.acquire("w", READ), Answer(200, github.headers()))
    with pytest.raises(Paused) as info:
        await throttle.acquire("w", READ)
    assert info.value.until == github.reset + 1.0
    permit = await throttle.acquire("w", COMMENT)
    assert permit.request.is_write


async def test_the_concurrency_cap_holds_requests_until_one_finishes() -> None:
    clock = ManualClock()
    throttle = IdentityThrottle(BOT, limits=ThrottleLimits(max_concurrency=3), clock=clock)
    first = await throttle.acquire("w", READ)
    await throttle.settle(first, Answer(200, rl_headers(4000, reset=clock.now() + 3600)))
    held = [await throttle.acquire(f"w{i}", READ) for i in range(3)]
    waiting = asyncio.ensure_future(throttle.acquire("late", READ))
    await asyncio.sleep(0.01)
    assert not waiting.done()
    assert (await throttle.snapshot()).waiting == 1
    await throttle.settle(held[0], Answer(200, {}))
    permit: Permit[RequestSpec] = await asyncio.wait_for(waiting, 30)  # generous: a loaded machine
    assert permit.worker_id == "late"


async def test_a_cancelled_waiter_gives_its_place_back() -> None:
    clock = ManualClock()
    throttle = IdentityThrottle(BOT, limits=ThrottleLimits(max_concurrency=1), clock=clock)
    held = await throttle.acquire("w", READ)
    waiting = asyncio.ensure_future(throttle.acquire("gone", READ))
    await asyncio.sleep(0.01)
    waiting.cancel()
    await asyncio.sleep(0.01)
    await throttle.settle(held, Answer(200, {}))
    snapshot = await throttle.snapshot()
    assert (snapshot.waiting, snapshot.in_flight) == (0, 0)
