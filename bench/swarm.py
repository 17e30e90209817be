"""Benchmark: per-worker overhead of a swarm run, and CPU seconds per reviewed PR.

The sandbox GitHub with the scripted model at zero latency, in dry-run mode, through the real
Prefect engine against a local Prefect server (started once; its start is not counted). The
passes are in ``bench/swarm_passes.py``: one worker at a time ("alone", 20 PRs) and
``--max-workers`` at a time ("wide", ``--prs`` PRs), each as the ``swarm-run`` flow and as the
same workers with no Prefect ("bare"). Per-worker overhead, Prefect's task run plus ours
(dispatch, artifacts, events, progress), is flow minus bare over the number of workers, in wall
time and in CPU time (CPU time of the benchmark process without the sandbox GitHub's thread;
the Prefect server's own CPU is reported beside it).

Run: ``uv run python bench/swarm.py [--prs 100] [--max-workers 16] [--post] [--unpaced]
[--prefect-db URL]``

``--compare DIR`` runs the same passes over the code tree in DIR (e.g. main before a change,
``git archive <commit> | tar -x -C DIR``) and over this checkout, each in a fresh process,
alternating, ``--rounds`` times, against the one Prefect server, and prints both side by side
with their ratios: the machine is shared and noisy, so only figures of one run are compared.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _child(args: argparse.Namespace) -> int:
    code = Path(args.code).resolve()
    sys.path.insert(0, str(code))
    from swarm_passes import run_passes  # bench/ is on the path: this script's folder

    data_dir = Path(tempfile.mkdtemp(prefix="swarm-bench-"))
    pgid = int(os.environ.get("BENCH_PREFECT_PGID", "0")) or None
    result = run_passes(
        args.prs,
        args.max_workers,
        data_dir,
        code,
        pgid,
        post=args.post,
        probe_prs=args.probe_prs,
        unpaced=args.unpaced,
    )
    result["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    Path(args.out).write_text(json.dumps(result), encoding="utf-8")
    return 0


def _spawn(code: Path, args: argparse.Namespace, env: dict[str, str], out: Path) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--code", str(code)]
    cmd += ["--prs", str(args.prs), "--max-workers", str(args.max_workers), "--out", str(out)]
    cmd += ["--probe-prs", str(args.probe_prs)]
    cmd += ["--post"] * args.post + ["--unpaced"] * args.unpaced
    subprocess.run(cmd, env=env, check=True, cwd=code)
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return result


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(ROOT))
    from bench.cli import add_child_arguments, bench_parser, local_prefect

    parser = bench_parser(__doc__, json_help="print every figure of every run as JSON")
    parser.add_argument("--prs", type=int, default=100)
    parser.add_argument("--max-workers", type=int, default=16)
    parser.add_argument("--probe-prs", type=int, default=20, help="PRs of the 'alone' passes")
    parser.add_argument("--post", action="store_true", help="also a posting pass at the end")
    parser.add_argument("--compare", help="another code tree to run side by side with this one")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--unpaced",
        action="store_true",
        help="GitHub's secondary point limits raised, so no pass waits on the throttle's pacing",
    )
    parser.add_argument(
        "--prefect-db",
        help="Prefect server database (postgresql+asyncpg://...), as production runs it; "
        "default: the local server's SQLite",
    )
    add_child_arguments(parser, ROOT)
    args = parser.parse_args(argv)
    if args.child:
        return _child(args)

    from flows.local.prefect_server import prefect_home, status

    with local_prefect(args.prefect_db) as home:
        server = status(prefect_home(home))
        env = {**os.environ, "BENCH_PREFECT_PGID": str(server.pid if server else 0)}
        trees = [("this", ROOT)]
        if args.compare:
            trees.insert(0, ("base", Path(args.compare).resolve()))
        results: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in trees}
        for n in range(args.rounds):
            order = trees if n % 2 == 0 else trees[::-1]
            for label, code in order:
                out = home / f"{label}-{n}.json"
                results[label].append(_spawn(code, args, env, out))
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        _print(args, results)
    return 0


def _median(runs: list[dict[str, Any]], *path: str) -> float:
    values = []
    for run in runs:
        value: Any = run
        for key in path:
            value = value[key]
        values.append(float(value))
    return statistics.median(values)


ROWS: list[tuple[str, tuple[str, ...], float, str]] = [
    ("overhead per worker alone, wall", ("alone", "overhead_wall_ms"), 1, "ms"),
    ("overhead per worker alone, CPU", ("alone", "overhead_cpu_ms"), 1, "ms"),
    ("  task run beyond worker, alone", ("passes", "alone", "task_beyond_worker_ms"), 1, "ms"),
    ("  dispatch (mint + seal), alone", ("passes", "alone", "dispatch_ms"), 1, "ms"),
    ("overhead per worker wide, wall", ("wide", "overhead_wall_ms"), 1, "ms"),
    (
        "  task run beyond worker, wide (latency)",
        ("passes", "wide", "task_beyond_worker_ms"),
        1,
        "ms",
    ),
    ("overhead per worker wide, CPU", ("wide", "overhead_cpu_ms"), 1, "ms"),
    ("Prefect server CPU per worker, wide", ("wide", "server_cpu_ms"), 1, "ms"),
    ("worker alone (bare), wall", ("passes", "alone bare", "worker_ms"), 1, "ms"),
    ("worker alone (bare), CPU", ("passes", "alone bare", "cpu_per_worker_ms"), 1, "ms"),
    ("worker wide (bare), CPU", ("passes", "wide bare", "cpu_per_worker_ms"), 1, "ms"),
    ("CPU per reviewed PR, wide flow", ("passes", "wide", "cpu_per_pr_s"), 1000, "ms"),
    ("dry run wall, wide flow", ("passes", "wide", "wall_s"), 1, "s"),
    ("  of which setup + discovery", ("passes", "wide", "setup_and_discovery_s"), 1, "s"),
    ("dry run wall, wide bare", ("passes", "wide bare", "wall_s"), 1, "s"),
    ("REST calls per reviewed PR", ("passes", "wide", "rest_per_pr"), 1, ""),
    ("peak memory", ("peak_mb",), 1, "MB"),
]


def _print(args: argparse.Namespace, results: dict[str, list[dict[str, Any]]]) -> None:
    labels = list(results)
    first = results[labels[0]][0]["passes"]
    print(
        f"\nswarm benchmark: scripted model, dry run; alone = {first['alone']['workers']} "
        f"workers one at a time, wide = {first['wide']['workers']} workers "
        f"{args.max_workers} at a time; medians of {args.rounds} round(s)"
    )
    heading = "".join(f"{label:>12}" for label in labels)
    print(f"  {'':40}{heading}" + ("   ratio" * (len(labels) > 1)))
    for title, path, scale, unit in ROWS:
        values = [scale * _median(results[label], *path) for label in labels]
        cells = "".join(f"{v:>9.1f} {unit:2}" for v in values)
        ratio = f"   {values[-1] / values[0]:.2f}" if len(values) > 1 and values[0] else ""
        print(f"  {title:40}{cells}{ratio}")
    for label in labels:
        for run in results[label]:
            ok = {name: f"{p['succeeded']}/{p['workers']}" for name, p in run["passes"].items()}
            print(f"  {label}: succeeded {ok}")


if __name__ == "__main__":
    raise SystemExit(main())
