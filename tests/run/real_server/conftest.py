"""One real ``prefect server start`` and one ``swarm run`` against it, shared by the session.

The swarm runs as a person runs it: the ``swarm`` command in its own process, with
``PREFECT_API_URL`` pointing at the server and the sandbox's settings in its environment. The
tests then read what the server stored, through the same REST API the UI reads.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from sandbox.github.seed import REPOS, credentials_env
from sandbox.server import SandboxServer
from tests.paths import ROOT
from tests.prefect_fixtures import template_dir
from tests.prefect_server import PrefectServer, client_env
from tests.run.conftest import PLANTED_ANTHROPIC_KEY, SEALING_KEY
from tests.sandbox_fixtures import SANDBOX_PACING

SWARM = str(Path(sys.executable).with_name("swarm"))
RUN_TIMEOUT_S = 240
LOG_PAGE = 200  # the server's largest page


@dataclass
class CliRun:
    """One ``swarm run`` process and the flow run it created on the server."""

    returncode: int
    output: str
    flow_run: dict[str, Any]
    seconds: float

    @property
    def flow_run_id(self) -> str:
        return str(self.flow_run["id"])


@dataclass
class ObservedSwarm:
    """The real server, the sandbox the swarm worked on, and the runs made so far."""

    server: PrefectServer
    sandbox: SandboxServer
    root: Path
    runs: list[CliRun] = field(default_factory=list)

    def env(self, **extra: str) -> dict[str, str]:
        env = client_env(self.server.api_url, self.root / "client-home")
        for key in list(env):
            if key.startswith("SWARM_"):
                del env[key]
        env.update(credentials_env(self.sandbox.state, self.root / "keys", self.sandbox.url))
        env.update(
            SWARM_DATA_DIR=str(self.root / "data"),
            SWARM_ROLES_DIR=str(ROOT / "roles"),
            SWARM_SEALING_KEY=SEALING_KEY,
            ANTHROPIC_API_KEY=PLANTED_ANTHROPIC_KEY,
            SWARM_MODEL="scripted",
        )
        # The suite's sandbox pacing: what these tests read is the server's record of a run, not
        # its speed, and a second between writes only made them wait.
        env.update(SANDBOX_PACING)
        env.update(extra)
        return env

    def run(self, *args: str, **extra_env: str) -> CliRun:
        """``swarm run ARGS`` against the server; the new flow run read back from it."""
        before = {r["id"] for r in self.flow_runs()}
        started = time.monotonic()
        done = subprocess.run(
            [SWARM, "run", *args],
            env=self.env(**extra_env),
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
        seconds = time.monotonic() - started
        new = [r for r in self.flow_runs() if r["id"] not in before]
        assert len(new) == 1, f"expected one new flow run:\n{done.stdout}\n{done.stderr}"
        run = CliRun(done.returncode, done.stdout + done.stderr, new[0], seconds)
        self.runs.append(run)
        return run

    def command(self, *args: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
        """``swarm ARGS`` (a command that reads, not a run) in this swarm's settings, its
        tables 200 columns wide so a test reads each cell whole."""
        return subprocess.run(
            [SWARM, *args],
            env={**self.env(**extra_env), "COLUMNS": "200"},
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )

    def flow_runs(self) -> list[dict[str, Any]]:
        return list(self.server.api("POST", "/flow_runs/filter", {"limit": 200}))

    def task_runs(self, flow_run_id: str) -> list[dict[str, Any]]:
        body = {"flow_runs": {"id": {"any_": [flow_run_id]}}, "limit": 200}
        return list(self.server.api("POST", "/task_runs/filter", body))

    def logs(self, flow_run_id: str) -> list[dict[str, Any]]:
        body = {"logs": {"flow_run_id": {"any_": [flow_run_id]}}, "limit": LOG_PAGE}
        found: list[dict[str, Any]] = []
        while True:
            page = self.server.api("POST", "/logs/filter", {**body, "offset": len(found)})
            found += page
            if len(page) < LOG_PAGE:
                return found

    def events(self, name: str) -> list[dict[str, Any]]:
        """Events of that name the server has stored (the events API pages by 50)."""
        body = {"filter": {"event": {"name": [name]}, "order": "ASC"}, "limit": 50}
        page = self.server.api("POST", "/events/filter", body)
        found = list(page["events"])
        while page.get("next_page"):
            page = httpx.get(page["next_page"], timeout=30).json()
            found += page["events"]
        return found

    def artifacts(self, flow_run_id: str) -> list[dict[str, Any]]:
        body = {"artifacts": {"flow_run_id": {"any_": [flow_run_id]}}, "limit": 200}
        return list(self.server.api("POST", "/artifacts/filter", body))


@pytest.fixture(scope="session")
def real_prefect(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PrefectServer]:
    templates = template_dir(request.config)
    server = PrefectServer(tmp_path_factory.mktemp("real-prefect"), templates).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def swarm(real_prefect: PrefectServer, tmp_path: Path) -> Iterator[ObservedSwarm]:
    """A swarm of this test's own, over a fresh sandbox GitHub, against the session's server."""
    with SandboxServer() as sandbox:
        yield ObservedSwarm(real_prefect, sandbox, tmp_path)


@pytest.fixture(scope="session")
def observed(
    real_prefect: PrefectServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ObservedSwarm]:
    """A swarm over every sandbox repository, run once against the real server."""
    with SandboxServer() as sandbox:
        swarm = ObservedSwarm(real_prefect, sandbox, tmp_path_factory.mktemp("observed-swarm"))
        run = swarm.run(*[arg for repo in REPOS for arg in ("--repo", repo)])
        assert run.returncode == 0, run.output
        yield swarm
