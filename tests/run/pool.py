"""A process work pool as an operator runs it, for the work-pool tests: a Prefect server on
PostgreSQL, the shipped ``prefect.yaml`` deployed unmodified, the shipped automations, and
``prefect worker`` processes ("machines") that a test can kill and start again.

Starting all that takes about a minute on a loaded machine, so one pool serves every test of
the module; each test works on repositories of its own in the shared sandbox.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from sandbox.github.limits import RateLimits
from sandbox.github.seed import credentials_env
from sandbox.github.state import SandboxState
from sandbox.server import SandboxServer
from tests.paths import ROOT
from tests.prefect_server import PrefectServer, client_env
from tests.python_process import run_python
from tests.run.conftest import SEALING_KEY
from tests.sandbox_fixtures import SANDBOX_PACING

RUN_TIMEOUT_S = 900
TERMINAL = {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}
DEPLOYMENT = "swarm-run/review-open-prs"


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


def add_repos(state: SandboxState, repos: list[str], prs_per_repo: int) -> None:
    """Repositories with ``prs_per_repo`` open PRs each, every one worth a review comment."""
    for repo in repos:
        state.add_repo(repo, {"README.md": f"# {repo}\n", "src/app.py": "VALUE = 1\n"})
        for n in range(prs_per_repo):
            change = f"def f{n}(x):\n    print('debug', x)  # TODO remove\n    return x * {n}\n"
            state.add_pull(repo, f"Change {n}", {f"src/mod_{n}.py": change}, author="alice-dev")


def operator_env(
    server: PrefectServer, sandbox: SandboxServer, root: Path, store_url: str, repos: list[str]
) -> dict[str, str]:
    env = client_env(server.api_url, root / "prefect-home")
    for key in [k for k in env if k.startswith("SWARM_") or k == "ANTHROPIC_API_KEY"]:
        del env[key]
    env.update(credentials_env(sandbox.state, root / "keys", sandbox.url))
    env.update(
        SWARM_STORE_URL=store_url,
        SWARM_DATA_DIR=str(root / "data"),
        SWARM_REPOS=",".join(repos),
        SWARM_SEALING_KEY=SEALING_KEY,
        SWARM_MODEL="scripted",
        # Workers poll the pool every second instead of every ten.
        PREFECT_WORKER_QUERY_SECONDS="1",
        # The overlap test holds GitHub's answers while flow processes start (tens of seconds
        # on a loaded machine); a held request must not time out meanwhile.
        SWARM_HTTP_TIMEOUT_SECONDS="180",
        # What docs/deploying.md asks of every worker machine: heartbeats, so the shipped
        # automations can tell a dead flow run from a slow one.
        PREFECT_FLOWS_HEARTBEAT_FREQUENCY="30",
    )
    # The sandbox's pacing (tests/sandbox_fixtures.py): its content-creation limits, which two
    # machines sharing one identity could break between them, stay GitHub's.
    env.update(SANDBOX_PACING)
    return env


def prefect(env: dict[str, str], *args: str, cwd: Path = ROOT) -> str:
    done = run_python("-m", "prefect", *args, env=env, cwd=cwd)
    assert done.returncode == 0, f"prefect {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def _parent_pid(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses; fields after its ")" do not.
    return int(stat.rsplit(")", 1)[1].split()[1])


def descendants(pid: int) -> set[int]:
    """Every living process below ``pid`` (a worker's flow-run processes and theirs)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            parent = _parent_pid(int(entry.name))
            if parent is not None:
                parents[int(entry.name)] = parent
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def flow_run_of(pid: int) -> str | None:
    """The flow run a process executes, from the environment its worker gave it."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return None
    for entry in environ:
        if entry.startswith(b"PREFECT__FLOW_RUN_ID="):
            return entry.split(b"=", 1)[1].decode()
    return None


@dataclass
class Machine:
    """One ``prefect worker`` process, started in a directory of its own."""

    name: str
    home: Path
    proc: subprocess.Popen[bytes]

    @property
    def log(self) -> Path:
        return self.home / "worker.log"

    def alive(self) -> bool:
        return self.proc.poll() is None

    def flow_processes(self) -> set[int]:
        return descendants(self.proc.pid)


@dataclass
class WorkPool:
    server: PrefectServer
    sandbox: SandboxServer
    env: dict[str, str]
    root: Path
    store_url: str
    machines: dict[str, Machine] = field(default_factory=dict)

    def start_machine(self, name: str) -> Machine:
        home = self.root / name
        home.mkdir(exist_ok=True)
        cmd = [sys.executable, "-m", "prefect", "worker", "start", "--pool", "swarm-process"]
        cmd += ["--limit", "2", "--name", name]
        with (home / "worker.log").open("ab") as out:
            proc = subprocess.Popen(cmd, env=self.env, cwd=home, stdout=out, stderr=out)
        self.machines[name] = Machine(name, home, proc)
        return self.machines[name]

    def kill(self, machine: Machine) -> set[int]:
        """SIGKILL the worker and every flow-run process under it, as a power cut would:
        nothing gets to report anything. Returns the flow-run processes killed."""
        below = machine.flow_processes()
        for pid in [machine.proc.pid, *below]:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        machine.proc.wait(timeout=30)
        return below

    def stop(self) -> None:
        for machine in self.machines.values():
            if machine.alive():
                machine.proc.terminate()
        for machine in self.machines.values():
            try:
                machine.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill(machine)

    def deployment_id(self, name: str = DEPLOYMENT) -> str:
        return str(self.server.api("GET", f"/deployments/name/{name}")["id"])

    def trigger(self, **fields: Any) -> str:
        """A run a person starts (the UI's "Quick run", or a "Custom run" changing ``fields`` of
        the deployment's request in the form it fills in): its flow run id."""
        deployment = self.server.api("GET", f"/deployments/{self.deployment_id()}")
        request = {**(deployment["parameters"].get("request") or {}), **fields}
        body = {"parameters": {"request": request}} if fields else {}
        run = self.server.api("POST", f"/deployments/{self.deployment_id()}/create_flow_run", body)
        return str(run["id"])

    def schedule_tick(self) -> str:
        """The deployment's latest schedule tick, created by Prefect's own scheduler code (a
        backfill over the last half hour): an auto-scheduled run, due now."""
        deployment = self.deployment_id()
        now = time.time()
        window = {
            "start_time": _iso(now - 31 * 60),
            "end_time": _iso(now),
            "max_runs": 1,
        }
        self.server.api("POST", f"/deployments/{deployment}/schedule", window)
        runs = self.server.api(
            "POST", "/flow_runs/filter", {"deployments": {"id": {"any_": [deployment]}}}
        )
        ticks = [r for r in runs if r["auto_scheduled"]]
        assert len(ticks) == 1, runs
        return str(ticks[0]["id"])

    def flow_run(self, flow_run_id: str) -> dict[str, Any]:
        return dict(self.server.api("GET", f"/flow_runs/{flow_run_id}"))

    def wait_for(self, flow_run_id: str, states: set[str] = TERMINAL) -> dict[str, Any]:
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while time.monotonic() < deadline:
            run = self.flow_run(flow_run_id)
            if run["state_type"] in states:
                return run
            time.sleep(1)
        raise AssertionError(f"flow run {flow_run_id} never reached {states} in {RUN_TIMEOUT_S} s")

    def children(self, parent_id: str) -> list[dict[str, Any]]:
        body = {"flow_runs": {"parent_flow_run_id": {"any_": [parent_id]}}, "limit": 50}
        return list(self.server.api("POST", "/flow_runs/filter", body))

    def bot_reviews(self, repo: str, number: int) -> int:
        pull = self.sandbox.state.pull(repo, number).pull
        assert pull is not None
        return sum(
            1 for r in pull.reviews if r.user_login.endswith("[bot]") and not r.files_a_reply
        )


def _iso(epoch: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(epoch, UTC).isoformat()


@contextmanager
def work_pool(pg_url: str, root: Path, repos: list[str], prs_per_repo: int) -> Iterator[WorkPool]:
    """The whole set-up, torn down (servers, workers, databases) when the block ends."""
    # GitHub's largest hourly budget for an installation (15,000): at the usual 5,000 the shared
    # throttle spreads what is left over the hour (~1.4 requests a second), and the fan-out's
    # reads waited on a budget its 30 reviews never came near. The secondary limits, which two
    # machines sharing one identity could break (content created per minute among them), stay.
    state = SandboxState(limits=RateLimits(core=15_000))
    add_repos(state, repos, prs_per_repo)
    with (
        SandboxServer(state) as sandbox,
        fresh_database(pg_url, "postgresql+asyncpg") as prefect_db,
        fresh_database(pg_url, "postgresql+psycopg") as store_url,
    ):
        server = PrefectServer(root / "prefect", database_url=prefect_db).start()
        pool = WorkPool(
            server, sandbox, operator_env(server, sandbox, root, store_url, repos), root, store_url
        )
        try:
            prefect(pool.env, "work-pool", "create", "swarm-process", "--type", "process")
            prefect(pool.env, "deploy", "--all")  # the shipped prefect.yaml, from the checkout
            automation = ROOT / "automations" / "dead-flow-runs.yaml"
            prefect(pool.env, "automation", "create", "--from-file", str(automation))
            for n in range(2):
                pool.start_machine(f"machine-{n}")
            yield pool
        finally:
            pool.stop()
            server.stop()
