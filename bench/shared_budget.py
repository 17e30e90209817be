"""One identity's budget shared by several processes through the store (PostgreSQL row lock).

``SWARM_THROTTLE_BACKEND=store`` (``auto`` on PostgreSQL) keeps each identity's buckets in one
row of ``swarm_throttle_state``; every acquire and every completion is one short transaction
holding that row's lock, so all processes and machines of an identity queue on one row. This
measures that row under N processes (each one ``IdentityThrottle`` over the real store, with
``--workers`` tasks each), against a stand-in GitHub shared by all processes (a counter in
shared memory that answers with ``x-ratelimit-*`` headers and 403 past the limit):

* ceiling: no limit that binds; how many requests per second (acquire + complete, nothing else)
  the shared row lets all processes together pass, and the latency one request spends in it.
* primary: ``--limit`` requests per ``--window`` seconds (GitHub's hour, compressed); the
  processes demand far more. Per finished window: what GitHub counted against the limit, and
  answers past it (must be 0).
* secondary: 900 REST points per "minute" of ``--minute`` seconds (15: 60 requests/s, below
  what the row passes, so the cap binds); the largest number of requests sent in any such
  window, aligned anywhere, against the cap (must not pass it).
* github-hour / github-max: what one installation may send at most, offered evenly by all
  processes: its whole hourly budget spread over the hour (15,000/h, the largest GitHub grants:
  4.2 requests/s), and the secondary limit's rate (900 points a minute: 15 reads/s, a burst it
  cannot keep up for long); the time each request spends in the shared row at that load.

    uv run python bench/shared_budget.py [--processes 1,2,4,8] [--workers 4] [--seconds 12]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import multiprocessing as mp
import statistics
import sys
import time
from dataclasses import dataclass
from multiprocessing.sharedctypes import Synchronized, SynchronizedArray
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sandbox.github.limits import peak_in_any_window  # noqa: E402

WINDOWS = 64
IDENTITY = "bench-shared[bot]"


@dataclass(frozen=True)
class Scenario:
    name: str
    limit: int  # GitHub's primary limit per window
    window_s: float  # GitHub's hour
    rest_points: int  # secondary points per "minute"
    minute_s: float
    seconds: float
    # Requests per second all processes together offer (spread evenly); 0: as fast as granted.
    rate: float = 0.0


@dataclass(frozen=True)
class Shared:
    """The stand-in GitHub every process asks: requests counted per window since ``t0``."""

    counts: SynchronizedArray[int]
    over: Synchronized[int]
    # Set by the parent once every process is ready: the start, and the first window's.
    start: Synchronized[float]
    go: Any
    ready: Any


def _answer(shared: Shared, sc: Scenario) -> tuple[int, dict[str, str]]:
    now = time.time()
    t0 = shared.start.value
    index = min(int((now - t0) // sc.window_s), WINDOWS - 1)
    reset = t0 + (index + 1) * sc.window_s
    with shared.counts.get_lock():
        shared.counts[index] += 1
        used = shared.counts[index]
    status = 200
    if used > sc.limit:
        status = 403
        with shared.over.get_lock():
            shared.over.value += 1
    headers = {
        "x-ratelimit-limit": str(sc.limit),
        "x-ratelimit-remaining": str(max(0, sc.limit - used)),
        "x-ratelimit-used": str(min(used, sc.limit)),
        "x-ratelimit-reset": str(int(reset)),
        "x-ratelimit-resource": "core",
    }
    return status, headers


async def _hammer(
    url: str, sc: Scenario, shared: Shared, workers: int, processes: int
) -> tuple[list[float], list[float], list[float], float]:
    """This process's requests until the scenario ends: (send times, the throttle's grant
    times, ms per request, CPU s)."""
    from agents.github import Answer, IdentityThrottle, SystemClock, ThrottleLimits, classify_rest
    from agents.ratelimit import Paused, RowBackend
    from agents.ratelimit.github.buckets import IdentityState
    from agents.store import Store

    limits = ThrottleLimits(
        rest_points_per_minute=sc.rest_points,
        minute_s=sc.minute_s,
        max_inline_wait=sc.window_s * 2,
        max_concurrency=10**6,
    )
    spec = classify_rest("GET", "/repos/acme/widgets/issues/4")
    sent: list[float] = []
    decided: list[float] = []
    spent: list[float] = []
    with Store.open(url, Path(".")) as store:
        throttle = IdentityThrottle(
            IDENTITY, limits=limits, clock=SystemClock(), backend=RowBackend(IdentityState, store)
        )
        # One request first, handed back unanswered: statements compiled, connections pooled.
        await throttle.abandon(await throttle.acquire("warm-up", spec))
        shared.ready.put(True)
        await asyncio.to_thread(shared.go.wait)
        start_at = shared.start.value
        await asyncio.sleep(max(0.0, start_at - time.time()))
        end = start_at + sc.seconds
        cpu = time.process_time()

        interval = workers * processes / sc.rate if sc.rate else 0.0

        async def worker(n: int) -> None:
            due = start_at + interval * n / workers
            while time.time() < end:
                if interval:
                    await asyncio.sleep(max(0.0, due - time.time()))
                    due += interval
                began = time.perf_counter()
                try:
                    permit = await throttle.acquire(f"w{n}", spec)
                except Paused:
                    await asyncio.sleep(0.05)
                    continue
                sent.append(time.time())
                decided.append(permit.granted_at)
                status, headers = _answer(shared, sc)
                await throttle.settle(permit, Answer(status, headers))
                spent.append((time.perf_counter() - began) * 1000)

        tasks = [asyncio.ensure_future(worker(n)) for n in range(workers)]
        await asyncio.wait(tasks, timeout=sc.seconds + sc.window_s)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        kept = [i for i, t in enumerate(sent) if t < end]
        cpu = time.process_time() - cpu
        return [sent[i] for i in kept], [decided[i] for i in kept], spent, cpu


def _process(
    url: str, sc: Scenario, shared: Shared, workers: int, processes: int, out: Any
) -> None:
    out.put(asyncio.run(_hammer(url, sc, shared, workers, processes)))


@dataclass
class Row:
    scenario: str
    processes: int
    sent: int
    seconds: float
    p50_ms: float
    p95_ms: float
    cpu_ms: float
    windows: str
    over: int
    secondary_peak: str

    def cells(self) -> list[str]:
        return [
            self.scenario,
            str(self.processes),
            f"{self.sent / self.seconds:,.0f}",
            f"{self.p50_ms:.1f} / {self.p95_ms:.1f}",
            f"{self.cpu_ms:.2f}",
            self.windows,
            str(self.over),
            self.secondary_peak,
        ]


HEADER = [
    "scenario",
    "processes",
    "requests/s (all)",
    "ms per request p50 / p95",
    "client CPU ms per request",
    "GitHub's count per finished window / limit",
    "answers past the limit",
    "peak sent (granted) in any secondary window / cap",
]


def run(url: str, sc: Scenario, processes: int, workers: int) -> Row:
    ctx = mp.get_context("spawn")
    shared = Shared(
        ctx.Array("i", WINDOWS), ctx.Value("i", 0), ctx.Value("d", 0.0), ctx.Event(), ctx.Queue()
    )
    out = ctx.Queue()
    procs = [
        ctx.Process(target=_process, args=(url, sc, shared, workers, processes, out))
        for _ in range(processes)
    ]
    for proc in procs:
        proc.start()
    for _ in procs:
        shared.ready.get(timeout=300)  # imported, connected
    # A whole second, so GitHub's resets (whole seconds in its headers) fall on window ends.
    shared.start.value = math.ceil(time.time()) + 1.0
    shared.go.set()
    results = [out.get(timeout=sc.seconds + sc.window_s + 120) for _ in procs]
    for proc in procs:
        proc.join()
    sent = [t for r in results for t in r[0]]
    decided = [t for r in results for t in r[1]]
    spent = sorted(ms for r in results for ms in r[2]) or [0.0]
    cpu = sum(r[3] for r in results)
    finished = int(sc.seconds // sc.window_s)
    windows = "-"
    if sc.limit < 10**8:
        windows = ", ".join(f"{shared.counts[i]}/{sc.limit}" for i in range(finished))
    secondary = "-"
    if sc.rest_points < 10**8:
        peak = peak_in_any_window
        secondary = f"{peak(sent, sc.minute_s)} ({peak(decided, sc.minute_s)})/{sc.rest_points}"
    return Row(
        sc.name,
        processes,
        len(sent),
        sc.seconds,
        statistics.median(spent),
        spent[int(len(spent) * 0.95)],
        cpu * 1000 / max(len(sent), 1),
        windows,
        shared.over.value,
        secondary,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", default="1,2,4,8")
    parser.add_argument("--workers", type=int, default=4, help="tasks per process")
    parser.add_argument("--seconds", type=float, default=12.0, help="per ceiling row")
    parser.add_argument("--limit", type=int, default=600, help="primary limit per window")
    parser.add_argument("--window", type=float, default=8.0, help="real seconds per hour")
    # 900 points per 15 s is 60 requests/s: below what the shared row passes, so the cap binds.
    parser.add_argument("--minute", type=float, default=15.0, help="real seconds per minute")
    parser.add_argument("--scenarios", default="ceiling,primary,secondary,github-hour,github-max")
    args = parser.parse_args()

    from agents.store import Store
    from bench.databases import postgresql_url

    unlimited = 10**9
    scenarios = {
        "ceiling": Scenario("ceiling", unlimited, 3600.0, unlimited, 60.0, args.seconds),
        "primary": Scenario("primary", args.limit, args.window, unlimited, 60.0, 3 * args.window),
        "secondary": Scenario("secondary", unlimited, 3600.0, 900, args.minute, 3 * args.minute),
        # The most an installation may spend in an hour, all of it: 15,000 requests (GitHub
        # Enterprise Cloud; 5,000 elsewhere) is 4.2 requests/s.
        "github-hour": Scenario(
            "github-hour", unlimited, 3600.0, unlimited, 60.0, args.seconds, rate=15000 / 3600
        ),
        # GitHub's ceiling for a burst: 900 REST points a minute is 15 reads/s.
        "github-max": Scenario(
            "github-max", unlimited, 3600.0, unlimited, 60.0, args.seconds, rate=15.0
        ),
    }
    rows: list[Row] = []
    for name in args.scenarios.split(","):
        for n in (int(p) for p in args.processes.split(",")):
            # A fresh schema per row: no state left from the row before.
            with postgresql_url() as url:
                Store.open(url, Path(".")).close()  # migrate once, before the processes race
                rows.append(run(url, scenarios[name], n, args.workers))
            print(" | ".join(rows[-1].cells()), flush=True)
    print()
    print(f"{args.workers} tasks per process; PostgreSQL store; machine: {mp.cpu_count()} cores\n")
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "---|" * len(HEADER))
    for row in rows:
        print("| " + " | ".join(row.cells()) + " |")


if __name__ == "__main__":
    main()
