"""Throttle benchmark on the sandbox GitHub: this gateway against plain githubkit, same demand.

Two scenarios, each run once per client on a fresh sandbox with a compressed clock (GitHub's
hour passes in a few real seconds) and the same real-time budget:

* reads:  50 workers of one installation, demand 3x the hourly budget (``--limit`` per window).
* reads-light: 10 workers, 5000/h budget, demand a hundredth of it: what pacing costs when
  the budget is not the bottleneck.
* writes: 20 workers posting 5 issue comments each (100 content creations in a burst), on a
  clock only 20x real time so the per-minute secondary limits matter.

Per client it reports the rate-limit errors GitHub sent (403/429 and GraphQL RATE_LIMITED, from
the sandbox's own log), the budget used per finished window, calls completed, and p50/p95 of the
latency a call spends outside the HTTP exchange itself (pacing waits, retry sleeps). Plain
githubkit runs with its defaults: ``LocalThrottler(100)`` and ``auto_retry`` (one retry after
``retry-after`` or the reset, slept inline). The throttle's own CPU cost per request is measured
separately (acquire + complete, no waiting, no network), and so is the cost of the same with the
budget shared through the store (``SWARM_THROTTLE_BACKEND=store``) on SQLite and PostgreSQL.

    uv run python bench/throttle.py [--limit 150] [--window 4] [--windows 2] [--json]
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from githubkit import GitHub  # noqa: E402
from githubkit.auth.base import BaseAuthStrategy  # noqa: E402
from githubkit.cache import MemCacheStrategy  # noqa: E402

from agents.github import (  # noqa: E402
    Answer,
    BudgetBackend,
    IdentityThrottle,
    ScaledClock,
    SystemClock,
    ThrottleLimits,
    classify_rest,
)
from agents.github.gateway import GitHubGateway  # noqa: E402
from agents.ratelimit import RowBackend  # noqa: E402
from agents.ratelimit.github.buckets import IdentityState  # noqa: E402
from agents.store import Store  # noqa: E402
from agents.transport.client import GitHubTransport  # noqa: E402
from bench.cli import bench_parser  # noqa: E402
from bench.databases import postgresql_url, sqlite_dir  # noqa: E402
from sandbox.github.clock import SandboxClock  # noqa: E402
from sandbox.github.limits import RateLimits  # noqa: E402
from sandbox.github.seed import MAINTAINER, REVIEWER_BOT, REVIEWER_INSTALLATION_ID  # noqa: E402
from sandbox.github.state import SandboxState  # noqa: E402
from sandbox.server import SandboxServer  # noqa: E402

REPO_OWNER, REPO_NAME = "acme", "widgets"
WRITE_SPEED, WRITE_SECONDS = 30.0, 14.0
LIGHT_LIMIT = 5000
ISSUE = 4

# Seconds each call spent inside the HTTP exchange (all attempts), per call.
_in_http: contextvars.ContextVar[list[float] | None] = contextvars.ContextVar(
    "in_http", default=None
)


class TimedTransport(httpx.AsyncBaseTransport):
    """Times each HTTP exchange so pacing and retry sleeps can be told apart from it."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport(limits=httpx.Limits(max_connections=100))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        start = time.perf_counter()
        response = await self.inner.handle_async_request(request)
        await response.aread()
        spent = _in_http.get()
        if spent is not None:
            spent.append(time.perf_counter() - start)
        return response

    async def aclose(self) -> None:
        return None  # shared by the per-call clients githubkit opens


@dataclass
class Outcome:
    client: str
    scenario: str
    limit_errors: int = 0
    completed: int = 0
    demanded: int = 0
    window_use: list[float] = field(default_factory=list)
    added_ms: list[float] = field(default_factory=list)
    maintainer_requests: int = 0
    failures: Counter[str] = field(default_factory=Counter)

    def row(self) -> dict[str, Any]:
        added = sorted(self.added_ms) or [0.0]
        return {
            "client": self.client,
            "scenario": self.scenario,
            "rate-limit errors": self.limit_errors,
            "calls done / demanded": f"{self.completed} / {self.demanded}",
            "budget used per window": (
                ", ".join(f"{u:.0%}" for u in self.window_use) if self.window_use else "-"
            ),
            "added p50 ms": round(added[len(added) // 2], 1),
            "added p95 ms": round(added[int(len(added) * 0.95)], 1),
            "failed calls": ", ".join(f"{k} {v}" for k, v in self.failures.items()) or "0",
        }


def _state(limit: int, speed: float) -> SandboxState:
    return SandboxState(clock=SandboxClock(speed=speed), limits=RateLimits(core=limit))


class Token:
    """Re-mints before the sandbox's one-hour token expiry (an hour is a few real seconds)."""

    def __init__(self, state: SandboxState) -> None:
        self.state, self.value, self.at = state, "", float("-inf")

    def __call__(self) -> str:
        if self.state.clock.now() - self.at > 1200:
            self.value = self.state.mint_token(REVIEWER_INSTALLATION_ID)
            self.at = self.state.clock.now()
        return self.value


class FreshTokenAuth(BaseAuthStrategy):
    """githubkit's token auth, but reading the current token per request (as the gateway does)."""

    def __init__(self, token: Token) -> None:
        self.token = token

    def get_auth_flow(self, github: Any) -> httpx.Auth:
        token = self.token

        class _Auth(httpx.Auth):
            def auth_flow(self, request: httpx.Request):  # type: ignore[no-untyped-def]
                request.headers["Authorization"] = f"token {token()}"
                yield request

        return _Auth()


Call = Callable[[str], Awaitable[Any]]


async def _drive(
    calls: Callable[[str], list[Call]], workers: int, seconds: float, outcome: Outcome
) -> None:
    async def worker(name: str) -> None:
        for call in calls(name):
            spent: list[float] = []
            _in_http.set(spent)
            start = time.perf_counter()
            try:
                await call(name)
            except Exception:
                continue
            outcome.completed += 1
            outcome.added_ms.append((time.perf_counter() - start - sum(spent)) * 1000)

    tasks = [asyncio.ensure_future(worker(f"w{i:02d}")) for i in range(workers)]
    await asyncio.wait(tasks, timeout=seconds)
    for task in tasks:
        task.cancel()  # plain githubkit may be asleep until a reset hours of sandbox time away
    await asyncio.gather(*tasks, return_exceptions=True)


def _measure_windows(state: SandboxState, peaks: dict[int, int]) -> Callable[[], None]:
    def sample() -> None:
        with state.lock:
            status = state.limiter.status(REVIEWER_BOT, "core", state.clock.now())
        if status.used:
            peaks[status.reset] = max(peaks.get(status.reset, 0), status.used)

    return sample


async def run_scenario(
    client: str, scenario: str, limit: int, speed: float, seconds: float
) -> Outcome:
    state = _state(limit, speed)
    outcome = Outcome(client, scenario)
    transport = TimedTransport()
    with SandboxServer(state) as server:
        token = Token(state)
        if client == "gateway":
            throttle = IdentityThrottle(
                REVIEWER_BOT, clock=ScaledClock(state.clock.now, state.clock.speed)
            )
            pools = GitHubTransport(server.url, identity=REVIEWER_BOT, pool=transport)
            gateway = GitHubGateway(server.url, REVIEWER_BOT, token, throttle, transport=pools)

            async def get_issue(worker: str) -> Any:
                return await gateway.for_worker(worker).get_issue(
                    f"{REPO_OWNER}/{REPO_NAME}", ISSUE
                )

            async def comment(worker: str) -> Any:
                return await gateway.for_worker(worker).create_issue_comment(
                    f"{REPO_OWNER}/{REPO_NAME}", ISSUE, f"note from {worker}"
                )
        else:
            gh = GitHub(
                FreshTokenAuth(token),
                base_url=server.url,
                http_cache=False,
                cache_strategy=MemCacheStrategy(),
                async_transport=transport,
            )

            async def get_issue(worker: str) -> Any:
                return await gh.rest.issues.async_get(REPO_OWNER, REPO_NAME, ISSUE)

            async def comment(worker: str) -> Any:
                return await gh.rest.issues.async_create_comment(
                    REPO_OWNER, REPO_NAME, ISSUE, body=f"note from {worker}"
                )

        peaks: dict[int, int] = {}
        sample = _measure_windows(state, peaks)

        async def watch() -> None:
            while True:
                sample()
                await asyncio.sleep(0.005)

        watcher = asyncio.ensure_future(watch())
        if scenario.startswith("reads"):
            # "reads": demand 3x the window's budget; "reads-light": a tenth of it.
            workers = 50 if scenario == "reads" else 10
            per_worker = 3 * limit // 50 if scenario == "reads" else max(1, limit // 100)
            outcome.demanded = workers * per_worker
            await _drive(lambda _w: [get_issue] * per_worker, workers, seconds, outcome)
        else:
            workers, per_worker = 20, 5
            outcome.demanded = workers * per_worker
            await _drive(lambda _w: [comment] * per_worker, workers, seconds, outcome)
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
        await transport.inner.aclose()
        now = state.clock.now()
        if scenario == "reads":
            outcome.window_use = [peaks[r] / limit for r in sorted(peaks) if r <= now]
        log = state.requests_by(REVIEWER_BOT)
        outcome.limit_errors = sum(1 for r in log if r.status in (403, 429))
        outcome.maintainer_requests = len(state.requests_by(MAINTAINER))
    return outcome


async def throttle_cost_per_request(
    n: int = 20_000, backend: BudgetBackend | None = None
) -> tuple[float, float]:
    """Wall and CPU seconds per request spent in the throttle: acquire + complete, nothing to
    wait for, no network; with ``backend``, including its state round trips."""
    limits = ThrottleLimits(rest_points_per_minute=10**9, pace_burst_min=10**9)
    throttle = IdentityThrottle("bench[bot]", limits=limits, clock=SystemClock(), backend=backend)
    spec = classify_rest("GET", "/repos/acme/widgets/issues/4")
    reset = str(int(time.time()) + 3600)
    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(n):
        permit = await throttle.acquire("w", spec)
        headers = {
            "x-ratelimit-limit": "1000000000",
            "x-ratelimit-remaining": str(10**9 - i - 1),
            "x-ratelimit-used": str(i + 1),
            "x-ratelimit-reset": reset,
            "x-ratelimit-resource": "core",
        }
        await throttle.settle(permit, Answer(200, headers))
    return (time.perf_counter() - wall) / n, (time.process_time() - cpu) / n


async def shared_budget_cost(n: int) -> dict[str, tuple[float, float]]:
    """The same through the store's state rows (``SWARM_THROTTLE_BACKEND=store``)."""
    costs: dict[str, tuple[float, float]] = {}
    with sqlite_dir() as data_dir, Store.open(None, data_dir) as store:
        costs["SQLite"] = await throttle_cost_per_request(n, RowBackend(IdentityState, store))
    with postgresql_url() as url, Store.open(url, Path(".")) as store:
        costs["PostgreSQL"] = await throttle_cost_per_request(n, RowBackend(IdentityState, store))
    return costs


def markdown(rows: list[dict[str, Any]]) -> str:
    keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(str(r[k]) for k in keys) + " |" for r in rows]
    return "\n".join(lines)


async def main() -> None:
    parser = bench_parser(__doc__)
    parser.add_argument("--limit", type=int, default=150, help="core requests per window")
    parser.add_argument("--window", type=float, default=4.0, help="real seconds per hour")
    parser.add_argument("--windows", type=int, default=2, help="windows each read run lasts")
    parser.add_argument(
        "--shared-requests", type=int, default=500, help="requests timed per shared backend"
    )
    args = parser.parse_args()

    # githubkit logs a traceback per rate-limit error it retries; the table counts them.
    logging.getLogger("githubkit").setLevel(logging.CRITICAL)
    runs = (
        ("reads", 3600 / args.window, args.window * args.windows + 0.5),
        ("reads-light", 3600 / args.window, args.window),
        # Secondary limits are per minute: a slower clock so a burst spans less than one.
        ("writes", WRITE_SPEED, WRITE_SECONDS),
    )
    outcomes: list[Outcome] = []
    for scenario, speed, seconds in runs:
        # The light run uses GitHub's real installation budget: its burst allowance is to scale.
        limit = LIGHT_LIMIT if scenario == "reads-light" else args.limit
        for client in ("gateway", "githubkit"):
            outcomes.append(await run_scenario(client, scenario, limit, speed, seconds))
    _, cpu = await throttle_cost_per_request()
    shared = await shared_budget_cost(args.shared_requests)
    rows = [o.row() for o in outcomes]
    if args.json:
        shared_ms = {name: {"wall": w * 1000, "cpu": c * 1000} for name, (w, c) in shared.items()}
        report = {"rows": rows, "throttle_cpu_ms_per_request": cpu * 1000, "shared": shared_ms}
        print(json.dumps(report, indent=2))
        return
    print(
        f"sandbox: core {args.limit}/h, an hour = {args.window:g} real s, "
        f"reads run {args.windows} windows; writes: 100 comments from 20 workers, "
        f"clock x{WRITE_SPEED:g}, "
        f"{WRITE_SECONDS:g} s\n"
    )
    print(markdown(rows))
    print(f"\nthrottle CPU overhead: {cpu * 1000:.3f} ms per request (target < 0.2 ms)")
    print(
        "shared budget through the store, per request (wall / CPU ms): "
        + ", ".join(f"{name} {w * 1000:.2f} / {c * 1000:.2f}" for name, (w, c) in shared.items())
    )
    print(
        "maintainer requests: "
        + ", ".join(f"{o.client}/{o.scenario}={o.maintainer_requests}" for o in outcomes)
    )


if __name__ == "__main__":
    asyncio.run(main())
