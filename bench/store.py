"""Store benchmark: batched transcript appends per second, and history_search latency at scale.

    uv run python bench/store.py                      # both backends, 10^6 events each
    uv run python bench/store.py --backend sqlite --events 200000

PostgreSQL comes from SWARM_TEST_PG_URL (default postgresql+psycopg://postgres@127.0.0.1:5432/test);
the benchmark works in its own schema and drops it afterwards. Targets (issue 4):
>= 5,000 events/s appended on SQLite, history_search p95 < 50 ms at 10^6 events.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from agents.store import NewWorker

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.memory import history_search
from agents.store import NewEvent, Store
from bench.databases import postgresql_url, sqlite_dir

COMMON = "review parser test fix diff file commit branch merge comment token budget cache worker"
VOCAB = [f"w{i}" for i in range(5000)] + COMMON.split()


def sentence(rng: random.Random) -> str:
    # Zipf-like: a few words are everywhere, most are rare, as in real transcripts.
    words = [VOCAB[min(int(rng.paretovariate(1.1)) - 1, len(VOCAB) - 1)] for _ in range(12)]
    words += rng.sample(VOCAB, 4)
    return " ".join(words)


def fill(
    store: Store, workers: list[str], total: int, batch: int, rng: random.Random
) -> tuple[float, float]:
    """Append ``total`` events round-robin over ``workers``; returns (events/s wall-clock,
    events/s of this process's CPU time). The second shows the store's own cost when the
    machine is shared and the wall clock includes waiting for a CPU."""
    done = 0
    elapsed = 0.0
    cpu = 0.0
    i = 0
    while done < total:
        n = min(batch, total - done)
        kind = "tool_result" if i % 5 == 4 else "assistant_turn"
        events = [
            NewEvent(kind, {"name": "get_diff", "status": "ok", "output": sentence(rng)})
            if kind == "tool_result"
            else NewEvent(kind, sentence(rng), tokens=20)
            for _ in range(n)
        ]
        t0, c0 = time.perf_counter(), time.process_time()  # time the store call only
        store.append_events(workers[i % len(workers)], events)
        elapsed += time.perf_counter() - t0
        cpu += time.process_time() - c0
        done += n
        i += 1
    return done / elapsed, done / max(cpu, 1e-9)


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_backend(name: str, url: str | None, data_dir: Path, args: argparse.Namespace) -> None:
    rng = random.Random(7)
    store = Store.open(url, data_dir)
    run_id = store.create_run("bench")
    workers = [
        store.create_worker(NewWorker(run_id, role_chain=["reviewer"], status="running"))
        for _ in range(args.sessions)
    ]
    measured = min(args.measure, args.events)
    rate, cpu_rate = fill(store, workers, measured, args.batch, rng)
    print(
        f"[{name}] append: {measured:,} events in batches of {args.batch}: {rate:,.0f} events/s "
        f"wall-clock ({cpu_rate:,.0f}/s of client CPU)"
    )
    single, single_cpu = fill(store, workers, min(2000, args.events), 1, rng)
    print(
        f"[{name}] append: single-event transactions: {single:,.0f} events/s "
        f"({single_cpu:,.0f}/s of client CPU)"
    )
    rest = args.events - measured - min(2000, args.events)
    if rest > 0:
        t0 = time.perf_counter()
        bulk, _ = fill(store, workers, rest, 1000, rng)
        print(
            f"[{name}] filled to {args.events:,} events in {time.perf_counter() - t0:.0f}s "
            f"({bulk:,.0f} events/s at batch 1000)"
        )
    if name == "postgresql":
        with store._db.write() as conn:
            conn.exec_driver_sql("ANALYZE")
    queries: list[tuple[str, str | None, bool]] = [
        ("common word", "review", False),
        ("rare word", "w4321", False),
        ("two words", "parser w17", False),
        ("no query", None, False),
        ("common + tools", "diff", True),
    ]
    for label, query, tools in queries:
        samples = []
        for _ in range(args.queries):
            caller = rng.choice(workers)
            t0 = time.perf_counter()
            history_search(store, caller, query, limit=10, include_tool_events=tools)
            samples.append((time.perf_counter() - t0) * 1000)
        print(
            f"[{name}] history_search {label:<15} p50 {statistics.median(samples):6.2f} ms"
            f"  p95 {percentile(samples, 0.95):6.2f} ms  ({args.queries} queries, "
            f"{args.events // args.sessions} events/session)"
        )
    store.close()


def main() -> None:
    print(f"load average at start: {os.getloadavg()}, CPUs: {os.cpu_count()}")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--sessions", type=int, default=1000, help="workers to spread events over")
    parser.add_argument("--batch", type=int, default=100, help="events per append_events call")
    parser.add_argument("--measure", type=int, default=100_000, help="events timed for append/s")
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()

    if args.backend in ("sqlite", "both"):
        with sqlite_dir() as data_dir:
            bench_backend("sqlite", None, data_dir, args)
    if args.backend in ("postgresql", "both"):
        with postgresql_url() as url:
            bench_backend("postgresql", url, Path(tempfile.gettempdir()), args)


if __name__ == "__main__":
    main()
