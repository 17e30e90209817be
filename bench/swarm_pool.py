"""Benchmark: one dry run over many PRs spread over two processes by a process work pool.

As an operator runs it: a Prefect server on PostgreSQL (its own database), the shipped
``prefect.yaml`` deployed unmodified to the ``swarm-process`` pool, ``--pool-workers`` ``prefect
worker`` processes, the store on PostgreSQL (shared, so the one bot identity's GitHub budget is
shared through it), the sandbox GitHub (in this process, on loopback) with ``--prs`` PRs split
over ``--repos`` repositories, and the scripted model at zero latency. One run of the deployment
over the repositories fans out into one child flow run per repository, each in a process of its
own.

Reports the wall time from the trigger to the parent's end, each child's, the CPU time of the
pool's worker processes with the flow runs they started (per reviewed PR), the Prefect server's
CPU time, and how the workers ended. One bot identity may spend 900 REST points a minute
(GitHub's secondary limit, enforced by the throttle, shared by both processes), so the run
cannot be faster than ``REST calls / 900`` minutes whatever the orchestration costs.

Run: ``uv run python bench/swarm_pool.py [--prs 1000] [--repos 2] [--pool-workers 2]``
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PG_URL = os.environ.get("SWARM_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
TERMINAL = {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}


def _database(driver: str) -> tuple[str, str]:
    import sqlalchemy as sa

    name = f"swarm_bench_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    admin.dispose()
    url = sa.make_url(PG_URL).set(drivername=driver, database=name)
    return name, url.render_as_string(hide_password=False)


def _drop(names: list[str]) -> None:
    import sqlalchemy as sa

    admin = sa.create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        for name in names:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    admin.dispose()


def _cpu(pid: int) -> float:
    """CPU seconds of ``pid`` and of the children it waited for (the flow runs it started)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _prefect(env: dict[str, str], *args: str) -> str:
    """One ``prefect`` command, as an operator types it in the checkout; its output."""
    cmd = [sys.executable, "-m", "prefect", *args]
    try:
        done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    except subprocess.CalledProcessError as failed:
        raise RuntimeError(f"prefect {' '.join(args)}:\n{failed.stdout}\n{failed.stderr}") from None
    return done.stdout + done.stderr


def _env(server: Any, sandbox: Any, root: Path, store_url: str, repos: list[str]) -> dict[str, str]:
    from sandbox.github.seed import credentials_env
    from tests.prefect_server import client_env

    # Nothing of this machine's own swarm settings: only what an operator gives the workers.
    env = {
        k: v
        for k, v in client_env(server.api_url, root / "prefect-home").items()
        if not k.startswith("SWARM_") and k != "ANTHROPIC_API_KEY"
    }
    env.update(credentials_env(sandbox.state, root / "keys", sandbox.url))
    env.update(
        SWARM_STORE_URL=store_url,
        SWARM_DATA_DIR=str(root / "data"),
        SWARM_REPOS=",".join(repos),
        SWARM_SEALING_KEY=base64.urlsafe_b64encode(os.urandom(32)).decode(),
        SWARM_MODEL="scripted",
        PREFECT_WORKER_QUERY_SECONDS="1",
    )
    return env


def main(argv: list[str] | None = None) -> int:
    from bench.cli import bench_parser

    parser = bench_parser(__doc__)
    parser.add_argument("--prs", type=int, default=1000)
    parser.add_argument("--repos", type=int, default=2)
    parser.add_argument("--pool-workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=3600.0)
    args = parser.parse_args(argv)

    from swarm_passes import build_sandbox, group_cpu_s  # bench/ is this script's folder

    from sandbox.server import SandboxServer
    from tests.prefect_server import PrefectServer

    repos = [f"acme/pool-bench-{n}" for n in range(1, args.repos + 1)]
    sizes = {r: args.prs // args.repos + (i < args.prs % args.repos) for i, r in enumerate(repos)}
    root = Path(tempfile.mkdtemp(prefix="swarm-pool-bench-"))
    names: list[str] = []
    workers: list[subprocess.Popen[bytes]] = []
    with SandboxServer(build_sandbox(sizes)) as sandbox:
        try:
            name, prefect_db = _database("postgresql+asyncpg")
            names.append(name)
            name, store_url = _database("postgresql+psycopg")
            names.append(name)
            server = PrefectServer(root / "prefect", database_url=prefect_db).start()
            try:
                env = _env(server, sandbox, root, store_url, repos)
                _prefect(env, "work-pool", "create", "swarm-process", "--type", "process")
                _prefect(env, "deploy", "--all")
                for n in range(args.pool_workers):
                    home = root / f"machine-{n}"
                    home.mkdir()
                    cmd = [sys.executable, "-m", "prefect", "worker", "start"]
                    cmd += ["--pool", "swarm-process", "--limit", "2", "--name", f"machine-{n}"]
                    out = (home / "worker.log").open("wb")
                    workers.append(subprocess.Popen(cmd, env=env, cwd=home, stdout=out, stderr=out))
                pgid = server.process.pid if server.process else None
                server_cpu0 = group_cpu_s(pgid)
                started = time.perf_counter()
                text = _prefect(
                    env,
                    "deployment",
                    "run",
                    "swarm-run/review-open-prs",
                    "--param",
                    'request={"dry_run": true}',
                )
                found = re.search(r"UUID:\s*([0-9a-f-]{36})", text)
                assert found, text
                parent = _wait(server, found.group(1), args.timeout)
                wall = time.perf_counter() - started
                worker_cpu = sum(_cpu(p.pid) for p in workers)
                server_cpu = group_cpu_s(pgid) - server_cpu0
                children = server.api(
                    "POST",
                    "/flow_runs/filter",
                    {"flow_runs": {"parent_flow_run_id": {"any_": [parent["id"]]}}, "limit": 50},
                )
            finally:
                _stop(workers)
                server.stop()
            statuses = _statuses(store_url, root)
            limited = sum(1 for r in sandbox.state.requests if r.status in (403, 429))
        finally:
            _drop(names)
    _print(args, parent, children, wall, worker_cpu, server_cpu, statuses, limited, root)
    return 0


def _stop(workers: list[subprocess.Popen[bytes]]) -> None:
    """Stop the pool's workers; one that does not stop within a minute is killed."""
    for p in workers:
        p.terminate()
    for p in workers:
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=30)


def _wait(server: Any, flow_run_id: str, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run: dict[str, Any] = server.api("GET", f"/flow_runs/{flow_run_id}")
        if run["state_type"] in TERMINAL:
            return run
        time.sleep(2)
    raise RuntimeError(f"flow run {flow_run_id} did not finish in {timeout:.0f} s")


def _statuses(store_url: str, root: Path) -> Counter[str]:
    from agents.store.store import Store

    store = Store.open(store_url, root / "data")
    try:
        return Counter(w.status for w in store.list_workers())
    finally:
        store.close()


def _print(
    args: argparse.Namespace,
    parent: dict[str, Any],
    children: list[dict[str, Any]],
    wall: float,
    worker_cpu: float,
    server_cpu: float,
    statuses: Counter[str],
    limited: int,
    root: Path,
) -> None:
    reviewed = statuses.get("succeeded", 0)
    if args.json:
        figures = {
            "prs": args.prs,
            "wall_s": wall,
            "parent": parent["state_type"],
            "children": {c["name"]: [c["state_type"], c.get("total_run_time")] for c in children},
            "workers": dict(statuses),
            "rate_limited": limited,
            "pool_cpu_s": worker_cpu,
            "server_cpu_s": server_cpu,
        }
        print(json.dumps(figures, indent=2))
        return
    print(
        f"\nswarm pool benchmark: {args.prs} PRs over {args.repos} repositories, dry run,"
        f" {args.pool_workers} prefect workers, scripted model"
    )
    print(f"  parent {parent['state_type']}: {wall:.0f} s from trigger to end")
    for child in sorted(children, key=lambda c: c["name"]):
        print(
            f"  child {child['name']!r} {child['state_type']}: run time"
            f" {child.get('total_run_time', 0):.0f} s"
        )
    print(f"  workers by status: {dict(statuses)}; rate-limit answers from GitHub: {limited}")
    print(
        f"  CPU: pool workers and their flow runs {worker_cpu:.0f} s"
        f" ({worker_cpu / max(reviewed, 1):.2f} s per reviewed PR),"
        f" Prefect server {server_cpu:.0f} s"
    )
    print(f"  logs: {root}")


if __name__ == "__main__":
    raise SystemExit(main())
