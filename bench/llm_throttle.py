"""LLM throttle benchmark: 50 workers on one API key asking for 3x its per-minute input budget.

Both modes call the scripted model over loopback HTTP through the real anthropic SDK; the model
enforces the key's limits the provider's way (token buckets refilling per minute, 429 with
``retry-after``). The key's clock runs ``--speed`` times faster than real time.

- ``throttle``: swarm's ``LLMClient`` (SDK retries off, every call reserved and settled on the
  key's throttle).
- ``sdk-retries``: a plain ``AsyncAnthropic`` with its default retries (2, honouring
  ``retry-after``), as swarm called the model before.

Reported per mode: calls that succeeded and failed, 429 answers, and the share of the
input-token budget used: admitted input tokens over what the key could admit from the first to
the last admission (a full bucket plus the refill: ``limit * (1 + minutes)``).
Targets (throttle): 0 429s and >= 90% of the input-token budget used. Also reported: the client's
CPU per call (the event loop's thread only: SDK, HTTP client and throttle, not the scripted
model's server threads).

    uv run python bench/llm_throttle.py [--workers 50] [--speed 10] [--json]

``BENCH_CODE=DIR`` measures the code tree in DIR with this script (another checkout, e.g. main
before a change), for a side-by-side run on the same machine.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, os.environ.get("BENCH_CODE") or str(ROOT))

import anthropic  # noqa: E402
import httpx2  # noqa: E402

from agents.llm.client import LLMClient, LLMError  # noqa: E402
from agents.ratelimit import ScaledClock  # noqa: E402
from agents.ratelimit.anthropic.throttle import KeyMetering  # noqa: E402
from bench.cli import bench_parser  # noqa: E402
from sandbox.github.clock import SandboxClock  # noqa: E402
from sandbox.model import ScriptedModel, ScriptedServer  # noqa: E402
from sandbox.model.ratelimit import ProviderLimits, key_id  # noqa: E402

KEY = "sk-ant-bench-shared-key"
MODEL = "claude-sonnet-4-6"
INPUT_PER_MINUTE = 40_000
CALL_CHARS = 3_200  # about 800 input tokens per call on the scripted model
MAX_TOKENS = 256


@dataclass
class Result:
    mode: str
    calls_ok: int
    calls_failed: int
    answers_429: int
    admitted_input_tokens: int
    key_minutes: float
    budget_used: float
    refill_used: float
    wall_s: float
    client_cpu_ms_per_call: float


def _request(worker: int, call: int) -> dict[str, Any]:
    text = f"worker {worker} call {call}: " + "lorem ipsum " * (CALL_CHARS // 12)
    return {
        "model": MODEL,
        "max_tokens": MAX_TOKENS,
        "messages": [{"role": "user", "content": text}],
    }


async def _fan_out(
    workers: int, calls: int, call: Callable[[int, int], Awaitable[object]], error: type[Exception]
) -> tuple[int, int]:
    """``workers`` concurrent workers making ``calls`` calls each, one after another: how many
    succeeded and how many ended in ``error``."""
    ok = failed = 0

    async def worker(n: int) -> None:
        nonlocal ok, failed
        for c in range(calls):
            try:
                await call(n, c)
                ok += 1
            except error:
                failed += 1

    await asyncio.gather(*(worker(n) for n in range(workers)))
    return ok, failed


async def _throttled(url: str, clock: SandboxClock, workers: int, calls: int) -> tuple[int, int]:
    client = LLMClient(
        api_key=KEY, base_url=url, metering=KeyMetering(clock=ScaledClock(clock.now, clock.speed))
    )

    def call(n: int, c: int) -> Awaitable[object]:
        return client.create(_request(n, c), worker_id=f"w{n}")

    try:
        return await _fan_out(workers, calls, call, LLMError)
    finally:
        await client.aclose()


async def _sdk_retries(url: str, workers: int, calls: int) -> tuple[int, int]:
    http = httpx2.AsyncClient(trust_env=False, timeout=600)
    sdk = anthropic.AsyncAnthropic(api_key=KEY, base_url=url, http_client=http)

    def call(n: int, c: int) -> Awaitable[object]:
        return sdk.messages.create(**_request(n, c))

    try:
        return await _fan_out(workers, calls, call, anthropic.APIError)
    finally:
        await sdk.close()


def run_mode(mode: str, workers: int, calls: int, speed: float) -> Result:
    clock = SandboxClock(speed=speed)
    limits = ProviderLimits(
        requests_per_minute=4_000,
        input_tokens_per_minute=INPUT_PER_MINUTE,
        output_tokens_per_minute=400_000,
    )
    model = ScriptedModel(clock=clock.now, limits=limits)
    started = time.perf_counter()
    with ScriptedServer(model) as server:
        cpu = time.thread_time()  # this thread runs the event loop; the server has its own
        if mode == "throttle":
            ok, failed = asyncio.run(_throttled(server.url, clock, workers, calls))
        else:
            ok, failed = asyncio.run(_sdk_retries(server.url, workers, calls))
        cpu = time.thread_time() - cpu
    wall = time.perf_counter() - started
    record = model.limits.records[key_id(KEY)]
    first, last = record.first_at or 0.0, record.last_at or 0.0
    minutes = max(last - first, 1e-9) / 60
    admitted = record.admitted_input_tokens
    # The first admission drew on a full bucket; everything after on the refill.
    after_first = admitted - (record.admissions[0][1] if record.admissions else 0)
    return Result(
        mode=mode,
        calls_ok=ok,
        calls_failed=failed,
        answers_429=model.status_counts.get(429, 0),
        admitted_input_tokens=admitted,
        key_minutes=round(minutes, 3),
        budget_used=round(admitted / (INPUT_PER_MINUTE * (1 + minutes)), 4),
        refill_used=round(max(0, after_first - INPUT_PER_MINUTE) / (INPUT_PER_MINUTE * minutes), 4),
        wall_s=round(wall, 2),
        client_cpu_ms_per_call=round(cpu * 1000 / max(1, workers * calls), 3),
    )


def main() -> None:
    parser = bench_parser(__doc__)
    parser.add_argument("--workers", type=int, default=50)
    parser.add_argument("--speed", type=float, default=10.0, help="key clock speed-up")
    args = parser.parse_args()
    tokens_per_call = CALL_CHARS // 4
    calls = max(1, round(3 * INPUT_PER_MINUTE / (args.workers * tokens_per_call)))
    results = [run_mode(m, args.workers, calls, args.speed) for m in ("throttle", "sdk-retries")]
    if args.json:
        print(json.dumps([asdict(r) for r in results]))
        return
    demand = args.workers * calls * tokens_per_call
    print(
        f"{args.workers} workers x {calls} calls of ~{tokens_per_call} input tokens "
        f"(~{demand / INPUT_PER_MINUTE:.1f}x the key's {INPUT_PER_MINUTE} input tokens/min), "
        f"key clock x{args.speed:g}"
    )
    header = ("mode", "ok", "failed", "429s", "key min", "budget", "refill", "CPU ms/call")
    print("{:<12} {:>4} {:>6} {:>5} {:>7} {:>7} {:>7} {:>11}".format(*header))
    for r in results:
        print(
            f"{r.mode:<12} {r.calls_ok:>4} {r.calls_failed:>6} {r.answers_429:>5} "
            f"{r.key_minutes:>7.2f} {r.budget_used:>7.1%} {r.refill_used:>7.1%} "
            f"{r.client_cpu_ms_per_call:>11.3f}"
        )


if __name__ == "__main__":
    main()
