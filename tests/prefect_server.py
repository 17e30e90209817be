"""A real ``prefect server start`` for tests: own PREFECT_HOME, a free loopback port, offline.

The test harness runs flows against an in-process server, and there Prefect had configured
logging in a different order than a person's ``swarm run`` against ``prefect server start``:
log shipping was broken against the real server while the harness tests passed. Tests that
speak for what a person sees in the UI start this server once per session and read what it
stored through its REST API, exactly as the UI does.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from flows.local import server_template
from flows.local.prefect_server import KEEPALIVE, OFFLINE, LoopbackServer

START_TIMEOUT_S = 180.0
# The answers Prefect's client sends a request again on (prefect/client/base.py).
SENT_AGAIN = {408, 429, 502, 503}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def client_env(api_url: str, home: Path) -> dict[str, str]:
    """Environment for a process that talks to this server as its Prefect API, and nothing
    else: no profile of the person running the tests, no Cloud key, no telemetry."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(OFFLINE)
    env["PREFECT_HOME"] = str(home)
    env["PREFECT_API_URL"] = api_url
    return env


class PrefectServer(LoopbackServer):
    """``prefect server start`` in its own process group; ``api(...)`` reads from it."""

    def __init__(
        self, root: Path, template_dir: Path | None = None, database_url: str | None = None
    ) -> None:
        self.root = root
        self.template_dir = template_dir
        # A PostgreSQL database (postgresql+asyncpg://...) instead of SQLite under the home.
        self.database_url = database_url
        self.home = root / "server-home"
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = root / "prefect-server.log"
        self.startup_s = 0.0

    @property
    def database(self) -> Path:
        return self.home / "prefect.db"

    def _template(self) -> Path | None:
        if self.template_dir is None or self.database_url is not None:
            return None
        import prefect

        return self.template_dir / f"prefect-{prefect.__version__}.db"

    def start(self) -> PrefectServer:
        self.home.mkdir(parents=True, exist_ok=True)
        template = self._template()
        env = client_env(self.api_url, self.home)
        env.pop("PREFECT_API_URL")
        if self.database_url is not None:
            env["PREFECT_API_DATABASE_CONNECTION_URL"] = self.database_url
        creates = server_template.applies(self.home, env)
        # Migrating a new database is most of a start: the product's copy of a migrated one.
        env.update(server_template.seed(self.home, template, env))
        env["PREFECT_SERVER_LOGGING_LEVEL"] = "WARNING"
        env.update(KEEPALIVE)  # as docs/deploying.md asks of a production server
        # Through settings, not only --host/--port: the UI's API address is derived from these
        # (with only the flags, the pages the server serves call the API on port 4200).
        env["PREFECT_SERVER_API_HOST"] = "127.0.0.1"
        env["PREFECT_SERVER_API_PORT"] = str(self.port)
        # Services a swarm run never needs; events, triggers and actions stay on.
        for service in ("SCHEDULER", "LATE_RUNS", "FOREMAN", "CANCELLATION_CLEANUP"):
            env[f"PREFECT_SERVER_SERVICES_{service}_ENABLED"] = "false"
        cmd = [sys.executable, "-m", "prefect", "server", "start"]
        cmd += ["--host", "127.0.0.1", "--port", str(self.port)]
        started = time.monotonic()
        with self.log_path.open("wb") as out:
            self.process = subprocess.Popen(
                cmd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        self._wait_healthy(started)
        self.startup_s = time.monotonic() - started
        if creates:
            server_template.keep(self.home, template)
        return self

    def _wait_healthy(self, started: float) -> None:
        assert self.process is not None
        while time.monotonic() - started < START_TIMEOUT_S:
            if self.process.poll() is not None:
                raise RuntimeError(f"prefect server exited: {self.log_path.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.api_url}/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"prefect server did not answer within {START_TIMEOUT_S:.0f} s")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def api(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """One REST call to the server, as the UI makes it; the decoded JSON."""
        response = self._request(method, path, body)
        return response.json() if response.content else None

    def api_text(self, path: str, body: dict[str, Any]) -> str:
        """A POST filter call's raw response body: what a leak scan reads."""
        return self._request("POST", path, body).text

    def _request(self, method: str, path: str, body: dict[str, Any] | None) -> httpx.Response:
        """The call, sent again on the answers Prefect's own client sends again on
        (prefect/client/base.py: 408, 429, 502 and 503, up to PREFECT_CLIENT_MAX_RETRIES = 5
        times, backing off): a SQLite server answers 503 when a write met "database is locked",
        rolled back, and the same call a moment later goes through."""
        pause = 0.5
        for _ in range(5):
            response = httpx.request(method, f"{self.api_url}{path}", json=body, timeout=30)
            if response.status_code not in SENT_AGAIN:
                break
            time.sleep(pause)
            pause *= 2
        response.raise_for_status()
        return response
