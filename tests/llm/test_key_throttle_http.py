"""Workers sharing one API key, through the real SDK and the scripted model over loopback HTTP.

Both run on virtual time (``SteppedClock``): it stands still while a call is in flight and jumps
to the next waiter's deadline once all is quiet, so what these tests assert (who waited, for how
long, what the key admitted per minute) is the throttle's doing, not the machine's load.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agents.llm.client import LLMClient
from agents.ratelimit.anthropic.throttle import KeyMetering, KeyThrottle
from sandbox.github.clock import SandboxClock
from sandbox.model import ScriptedModel, ScriptedServer
from sandbox.model.ratelimit import ProviderLimits
from tests.stepped_clock import SteppedClock

KEY = "sk-ant-api03-SHAREDKEYshared-do-not-leak"
MODEL = "claude-sonnet-4-6"


def _request(chars: int, max_tokens: int = 200) -> dict[str, Any]:
    return {
        "model": MODEL,
        "max_tokens": max_tokens,
        "messages": [{"role": "user", "content": "review this: " + "x" * chars}],
    }


def _in_flight(throttle: KeyThrottle) -> bool:
    return throttle.backend.transact(throttle.key, lambda s: bool(s.holds))


def test_a_429_on_one_worker_pauses_the_key_for_the_others() -> None:
    sandbox = SandboxClock(speed=0)
    clock = SteppedClock(sandbox)
    model = ScriptedModel(clock=sandbox.now)
    with ScriptedServer(model) as server:

        async def go() -> list[Any]:
            client = LLMClient(api_key=KEY, base_url=server.url, metering=KeyMetering(clock=clock))
            throttle = client.throttle(MODEL)
            try:
                await client.create(_request(100), worker_id="warm-up")  # learn the limits
                model.fail_next(times=1, status=429, retry_after_ms=10_000)
                first = asyncio.ensure_future(client.create(_request(100), worker_id="w0"))
                while (await throttle.snapshot())["paused_for_s"] == 0:
                    await asyncio.sleep(0.005)  # until w0's 429 has paused the key
                others = [
                    asyncio.ensure_future(client.create(_request(100), worker_id=f"w{n}"))
                    for n in (1, 2, 3)
                ]
                while (await throttle.snapshot())["waiting"] < 4:
                    await asyncio.sleep(0.005)  # all four queued while the key is paused
                async with clock.driving(busy=lambda: _in_flight(throttle)):
                    return list(await asyncio.gather(first, *others))
            finally:
                await client.aclose()

        results = asyncio.run(go())
    assert all(r.stop_reason == "end_turn" for r in results)
    assert model.status_counts == {200: 5, 429: 1}
    [refused_at] = [t for t, status in model.answer_log if status == 429]
    after = [t for t, status in model.answer_log if status == 200 and t > refused_at]
    assert len(after) == 4
    assert min(after) >= refused_at + 10.0  # nobody called while the key was paused
    assert [r.attempts for r in results] == [2, 1, 1, 1]
    assert all(r.waited_s >= 10.0 for r in results[1:])


def test_workers_sharing_a_key_stay_under_its_per_minute_input_budget() -> None:
    sandbox = SandboxClock(speed=0)
    clock = SteppedClock(sandbox)
    limits = ProviderLimits(requests_per_minute=1000, input_tokens_per_minute=20_000)
    model = ScriptedModel(clock=sandbox.now, limits=limits)
    with ScriptedServer(model) as server:

        async def worker(client: LLMClient, n: int) -> int:
            for _ in range(4):
                await client.create(_request(10_000), worker_id=f"w{n}")
            return n

        async def go() -> None:
            client = LLMClient(api_key=KEY, base_url=server.url, metering=KeyMetering(clock=clock))
            throttle = client.throttle(MODEL)
            try:
                async with clock.driving(busy=lambda: _in_flight(throttle)):
                    await asyncio.gather(*(worker(client, n) for n in range(10)))
            finally:
                await client.aclose()

        asyncio.run(go())
    assert model.status_counts == {200: 40}  # 5 budgets' worth of demand, not one 429
    record = model.limits.record(KEY)
    assert record.first_at is not None and record.last_at is not None
    # ... and the budget is used: after the first minute's full bucket, the rest of the input
    # goes out at no less than 90% of the refill rate.
    per_minute = limits.input_tokens_per_minute
    after_first_bucket = record.admitted_input_tokens - per_minute
    minutes = (record.last_at - record.first_at) / 60
    assert after_first_bucket / minutes >= 0.9 * per_minute, (after_first_bucket, minutes)
