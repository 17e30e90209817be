"""The shipped ``prefect.yaml`` on a real process work pool, as an operator runs it.

A Prefect server on PostgreSQL (its own database), the ``swarm-process`` pool, ``prefect deploy
--all`` from the repository with the file unmodified, and two ``prefect worker`` processes, each
started in a directory of its own (the checkout's path must not matter). One run over six
repositories fans out into one child run per repository; both workers execute children, every
PR gets exactly one review, GitHub never answers with a rate limit, and the parent's report
counts every child's work.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import pytest
import sqlalchemy as sa

from agents.store.store import Store
from sandbox.github.state import SandboxState
from sandbox.server import SandboxServer
from tests.flows.conftest import ROOT, SEALING_KEY
from tests.prefect_server import PrefectServer, client_env

POOL_REPOS = [f"acme/pool-{n}" for n in range(1, 7)]
PRS_PER_REPO = 5
RUN_TIMEOUT_S = 900

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.timeout(RUN_TIMEOUT_S + 300)]
TERMINAL = {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}


@contextmanager
def fresh_database(pg_url: str, driver: str) -> Iterator[str]:
    """A new PostgreSQL database on the test server; its URL with ``driver``; dropped after."""
    name = f"swarm_e2e_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(pg_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    url = sa.make_url(pg_url).set(drivername=driver, database=name)
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


def pool_sandbox() -> SandboxState:
    state = SandboxState()
    for repo in POOL_REPOS:
        state.add_repo(repo, {"README.md": f"# {repo}\n", "src/app.py": "VALUE = 1\n"})
        for n in range(PRS_PER_REPO):
            change = f"def f{n}(x):\n    print('debug', x)  # TODO remove\n    return x * {n}\n"
            state.add_pull(repo, f"Change {n}", {f"src/mod_{n}.py": change}, author="alice-dev")
    return state


def operator_env(
    server: PrefectServer, sandbox: SandboxServer, root: Path, store_url: str
) -> dict[str, str]:
    env = client_env(server.api_url, root / "prefect-home")
    for key in [k for k in env if k.startswith("SWARM_") or k == "ANTHROPIC_API_KEY"]:
        del env[key]
    env_file = sandbox.state.write_credentials(root / "keys", sandbox.url)
    for line in env_file.read_text().splitlines():
        key, _, value = line.partition("=")
        env[key] = value
    env.update(
        SWARM_STORE_URL=store_url,
        SWARM_DATA_DIR=str(root / "data"),
        SWARM_REPOS=",".join(POOL_REPOS),
        SWARM_SEALING_KEY=SEALING_KEY,
        SWARM_MODEL="scripted",
        # Workers poll the pool every second instead of every ten.
        PREFECT_WORKER_QUERY_SECONDS="1",
    )
    return env


def prefect(env: dict[str, str], *args: str, cwd: Path = ROOT) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "prefect", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"prefect {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


@contextmanager
def pool_workers(env: dict[str, str], root: Path, count: int) -> Iterator[list[Path]]:
    """``count`` ``prefect worker`` processes, each started in its own empty directory."""
    procs: list[subprocess.Popen[bytes]] = []
    logs: list[Path] = []
    files: list[IO[bytes]] = []
    try:
        for n in range(count):
            home = root / f"machine-{n}"
            home.mkdir()
            log_path = home / "worker.log"
            out = log_path.open("wb")
            files.append(out)
            logs.append(log_path)
            cmd = [sys.executable, "-m", "prefect", "worker", "start", "--pool", "swarm-process"]
            cmd += ["--limit", "2", "--name", f"machine-{n}"]
            procs.append(
                subprocess.Popen(cmd, env=env, cwd=home, stdout=out, stderr=subprocess.STDOUT)
            )
        yield logs
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        for log_file in files:
            log_file.close()


def wait_for(server: PrefectServer, flow_run_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while time.monotonic() < deadline:
        run = server.api("GET", f"/flow_runs/{flow_run_id}")
        if run["state_type"] in TERMINAL:
            return dict(run)
        time.sleep(2)
    raise AssertionError(f"flow run {flow_run_id} did not finish in {RUN_TIMEOUT_S} s")


def test_one_run_over_six_repositories_spreads_over_two_pool_workers(
    pg_url: str, tmp_path: Path
) -> None:
    with (
        SandboxServer(pool_sandbox()) as sandbox,
        fresh_database(pg_url, "postgresql+asyncpg") as prefect_db,
        fresh_database(pg_url, "postgresql+psycopg") as store_url,
    ):
        server = PrefectServer(tmp_path / "prefect", database_url=prefect_db).start()
        try:
            env = operator_env(server, sandbox, tmp_path, store_url)
            prefect(env, "work-pool", "create", "swarm-process", "--type", "process")
            prefect(env, "deploy", "--all")  # the shipped prefect.yaml, from the checkout
            with pool_workers(env, tmp_path, 2) as worker_logs:
                started = prefect(env, "deployment", "run", "swarm-run/review-open-prs")
                found = re.search(r"UUID:\s*([0-9a-f-]{36})", started)
                assert found, started
                parent = wait_for(server, found.group(1))
            worker_text = [p.read_text(errors="replace") for p in worker_logs]
            children = server.api(
                "POST",
                "/flow_runs/filter",
                {"flow_runs": {"parent_flow_run_id": {"any_": [parent["id"]]}}, "limit": 50},
            )
        finally:
            server.stop()

        # Subflows of the parent in the UI's tree, one per repository, named after it.
        assert sorted(c["name"] for c in children) == [
            f"swarm reviewer over {r}" for r in POOL_REPOS
        ]
        assert {c["state_type"] for c in children} == {"COMPLETED"}
        assert parent["state_type"] == "COMPLETED", parent.get("state")
        assert (
            parent["name"] == "swarm reviewer over acme/pool-1, acme/pool-2, acme/pool-3 and 3 more"
        )

        store = Store.open(store_url, tmp_path / "data")
        try:
            parent_run = store.run_for_flow_run(parent["id"])
            assert parent_run is not None and parent_run.trigger == "flow-parent"
            child_runs = [r for r in store.list_runs(limit=50) if r.trigger == "flow"]
        finally:
            store.close()
        assert len(child_runs) == len(POOL_REPOS)
        # Both machines ran some of the children (a worker that lost the race for a run logs
        # "Aborted submission", not this line).
        for text in worker_text:
            ran = re.findall(r"Flow run 'swarm reviewer over (acme/pool-\d)' submitted", text)
            assert ran, text[-3000:]
        # The parent's report counts every child's reviews.
        assert parent_run.totals["new_reviews"] == len(POOL_REPOS) * PRS_PER_REPO
        assert parent_run.totals["failed"] == 0

    for repo in POOL_REPOS:
        for number in range(1, PRS_PER_REPO + 1):
            pull = sandbox.state.pull(repo, number).pull
            assert pull is not None
            bots = [r for r in pull.reviews if r.user_login.endswith("[bot]")]
            assert len(bots) == 1, f"{repo}#{number}: {len(bots)} bot reviews"
    for login, counters in sandbox.state.counters.items():
        assert counters.primary_limited == 0 and counters.secondary_limited == 0, login
