"""Benchmark: a 100-PR swarm on the sandbox GitHub with the scripted, zero-latency model.

Reports wall time, orchestration overhead per worker (Prefect's task runs, and ours: discovery,
minting and sealing), GitHub calls per reviewed PR (REST and GraphQL, as the sandbox counted
them) and the process's peak memory. Two passes over the same PRs:

- ``dry-run``: every worker reads its PR and prepares its review, nothing is posted. This is the
  orchestration cost without GitHub's write pacing.
- ``post``: the real thing. GitHub's secondary limits (one mutation per identity per second,
  ~80 content-creating requests per minute) are honoured by the throttle, so with one identity
  the posting pass cannot finish 100 reviews faster than ~100 s; that floor is GitHub's, not ours.

Run: ``uv run python bench/swarm.py [--prs 100] [--max-workers 16] [--skip-post]``

A first "probe" pass (20 PRs, one worker at a time) measures per-worker orchestration
without contention; in the concurrent passes the same figure also holds event-loop waits.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BENCH_REPO = "acme/bench"
PROBE_REPO = "acme/probe"
PROBE_PRS = 20


def _files(n: int) -> dict[str, str]:
    body = "def f{n}(x):\n    print('debug', x)  # TODO remove\n    return x * {n}\n"
    return {f"src/bench/mod_{n:03d}.py": body.format(n=n)}


def build_sandbox(prs: int) -> Any:
    from sandbox.github.limits import RateLimits
    from sandbox.github.state import SandboxState

    # GitHub's primary budget is far above what 100 PRs need; keep the sandbox's defaults for
    # the secondary limits so the throttle has real limits to respect.
    state = SandboxState(limits=RateLimits(core=15_000))
    for repo, count in ((PROBE_REPO, PROBE_PRS), (BENCH_REPO, prs)):
        state.add_repo(repo, {"README.md": "# bench\n", "src/bench/__init__.py": ""})
        for n in range(count):
            state.add_pull(repo, f"Bench change {n}", _files(n), author="alice-dev")
    return state


def configure(server: Any, data_dir: Path) -> None:
    from sandbox.github.seed import credentials_env

    os.environ.update(credentials_env(server.state, data_dir / "keys", server.url))
    os.environ["SWARM_DATA_DIR"] = str(data_dir)
    os.environ["SWARM_ROLES_DIR"] = str(ROOT / "roles")
    os.environ["SWARM_REPOS"] = BENCH_REPO
    os.environ.pop("ANTHROPIC_API_KEY", None)


def run_pass(
    server: Any, *, dry_run: bool, max_workers: int, repo: str = BENCH_REPO, name: str = ""
) -> dict[str, Any]:
    from flows.swarm_run import swarm_run

    before = len(server.state.requests)
    started = time.perf_counter()
    pending = swarm_run(
        repos=[repo], max_workers=max_workers, dry_run=dry_run, model="scripted", return_state=True
    )
    state = asyncio.run(cast("Coroutine[Any, Any, Any]", pending))
    wall = time.perf_counter() - started
    report = state.result(raise_on_failure=False)
    calls = [r for r in server.state.requests[before:] if (r.login or "").endswith("[bot]")]
    kinds = Counter("graphql" if r.resource == "graphql" else "rest" for r in calls)
    workers = max(len(report.outcomes), 1)
    reviewed = sum(1 for o in report.outcomes if o.status == "succeeded") or 1
    t = report.timings
    return {
        "pass": name or ("dry-run" if dry_run else "post"),
        "workers": len(report.outcomes),
        "succeeded": sum(1 for o in report.outcomes if o.status == "succeeded"),
        "posted": report.new_reviews,
        "wall_s": wall,
        "flow_wall_s": t.wall_s,
        "prefect_task_overhead_ms": 1000 * t.orchestration_s / workers,
        "dispatch_ms": 1000 * t.dispatch_s / workers,
        "setup_and_discovery_s": t.setup_and_discovery_s,
        "worker_s_mean": t.worker_s / workers,
        "rest_per_pr": kinds["rest"] / reviewed,
        "graphql_per_pr": kinds["graphql"] / reviewed,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prs", type=int, default=100)
    parser.add_argument("--max-workers", type=int, default=16)
    parser.add_argument("--skip-post", action="store_true", help="only the dry-run pass")
    args = parser.parse_args(argv)

    from flows.local_prefect import prefect_home, stop
    from flows.prefect_env import prepare_prefect_env, use_local_prefect

    data_dir = Path(tempfile.mkdtemp(prefix="swarm-bench-"))
    prepare_prefect_env()
    use_local_prefect(data_dir, force=True)
    try:
        return _bench(args, data_dir)
    finally:
        stop(prefect_home(data_dir))


def _bench(args: argparse.Namespace, data_dir: Path) -> int:
    from sandbox.server import SandboxServer

    results = []
    with SandboxServer(build_sandbox(args.prs)) as server:
        configure(server, data_dir)
        # The first flow run in a process pays for first-use imports; the probe then runs
        # workers one at a time, so its per-worker overhead is not inflated by workers sharing
        # the event loop.
        for name in ("warm-up", "probe"):
            results.append(
                run_pass(server, dry_run=True, max_workers=1, repo=PROBE_REPO, name=name)
            )
        results.append(run_pass(server, dry_run=True, max_workers=args.max_workers))
        if not args.skip_post:
            results.append(run_pass(server, dry_run=False, max_workers=args.max_workers))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(
        f"\nswarm benchmark: {args.prs} PRs, max_workers={args.max_workers}, scripted model"
        f"\n  (warm-up and probe: {PROBE_PRS} PRs each, one worker at a time; 'task run beyond"
        " worker' is Prefect's own overhead in the probe, plus event-loop waits when concurrent)"
    )
    for r in results:
        print(
            f"  {r['pass']:8} workers={r['workers']} ok={r['succeeded']} posted={r['posted']}"
            f"  wall={r['wall_s']:.1f}s (flow {r['flow_wall_s']:.1f}s,"
            f" setup+discovery {r['setup_and_discovery_s']:.1f}s)"
        )
        print(
            f"           per worker: task run beyond worker {r['prefect_task_overhead_ms']:.1f} ms,"
            f" dispatch (mint+seal) {r['dispatch_ms']:.1f} ms,"
            f" worker {r['worker_s_mean'] * 1000:.0f} ms"
        )
        print(
            f"           GitHub calls per reviewed PR: REST {r['rest_per_pr']:.2f},"
            f" GraphQL {r['graphql_per_pr']:.2f}"
        )
    print(f"  peak memory (this process): {peak_mb:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
