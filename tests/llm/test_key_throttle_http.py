"""Workers sharing one API key, through the real SDK and the scripted model over loopback HTTP."""

from __future__ import annotations

import asyncio
from typing import Any

from agents.llm.client import LLMClient
from agents.ratelimit import ScaledClock
from sandbox.github.clock import SandboxClock
from sandbox.model import ScriptedModel, ScriptedServer
from sandbox.model.ratelimit import ProviderLimits

KEY = "sk-ant-api03-SHAREDKEYshared-do-not-leak"
MODEL = "claude-sonnet-4-6"


def _request(chars: int, max_tokens: int = 200) -> dict[str, Any]:
    return {
        "model": MODEL,
        "max_tokens": max_tokens,
        "messages": [{"role": "user", "content": "review this: " + "x" * chars}],
    }


def _client(server: ScriptedServer, clock: SandboxClock) -> LLMClient:
    return LLMClient(api_key=KEY, base_url=server.url, clock=ScaledClock(clock.now, clock.speed))


def test_a_429_on_one_worker_pauses_the_key_for_the_others():
    clock = SandboxClock(speed=50)
    model = ScriptedModel(clock=clock.now)
    with ScriptedServer(model) as server:

        async def go() -> list[Any]:
            client = _client(server, clock)
            try:
                await client.create(_request(100), worker_id="warm-up")  # learn the limits
                model.fail_next(times=1, status=429, retry_after_ms=10_000)
                first = asyncio.ensure_future(client.create(_request(100), worker_id="w0"))
                throttle = client.throttle(MODEL)
                while (await throttle.snapshot())["paused_for_s"] == 0:
                    await asyncio.sleep(0.005)  # until w0's 429 has paused the key
                others = [client.create(_request(100), worker_id=f"w{n}") for n in (1, 2, 3)]
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
    assert all(r.waited_s > 5.0 for r in results[1:])


def test_workers_sharing_a_key_stay_under_its_per_minute_input_budget():
    clock = SandboxClock(speed=60)
    limits = ProviderLimits(requests_per_minute=1000, input_tokens_per_minute=20_000)
    model = ScriptedModel(clock=clock.now, limits=limits)
    with ScriptedServer(model) as server:

        async def worker(client: LLMClient, n: int) -> int:
            for _ in range(4):
                await client.create(_request(10_000), worker_id=f"w{n}")
            return n

        async def go() -> None:
            client = _client(server, clock)
            try:
                await asyncio.gather(*(worker(client, n) for n in range(10)))
            finally:
                await client.aclose()

        asyncio.run(go())
    assert model.status_counts == {200: 40}  # 5 budgets' worth of demand, not one 429
