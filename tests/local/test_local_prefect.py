"""The local Prefect server: started once in the background, reused, offline, given nothing
secret, and stopped on request."""

from __future__ import annotations

import http.client
import os
import time
from pathlib import Path

import pytest

from flows.local.prefect_server import (
    ensure_running,
    prefect_home,
    server_environment,
    status,
    stop,
)
from tests.conftest import HOST_GH_TOKEN

PLANTED = "sk-ant-api03-PLANTEDserverMustNotSeeThis"


def _environ_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    pairs = (item.decode(errors="replace").partition("=") for item in raw if item)
    return {key: value for key, _, value in pairs}


def _connection_survives_idle(port: int, *, idle_s: float) -> bool:
    """Whether one kept-alive connection still answers after ``idle_s``: Prefect's client reuses
    a connection idle up to 25 s, so a server closing it at 5 s races the client's next request."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", "/api/health")
        assert conn.getresponse().read() == b"true"
        first = conn.sock
        time.sleep(idle_s)
        try:
            conn.request("GET", "/api/health")
            answered = conn.getresponse().read() == b"true"
        except (OSError, http.client.HTTPException):
            return False
        return answered and conn.sock is first
    finally:
        conn.close()


@pytest.mark.slow
def test_one_server_is_started_reused_and_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLANTED)
    monkeypatch.setenv("SWARM_SEALING_KEY", PLANTED)
    monkeypatch.setenv("PREFECT_API_KEY", PLANTED)
    home = prefect_home(tmp_path / "data")
    server, started = ensure_running(home)
    try:
        assert started
        again, started_again = ensure_running(home)
        assert (again, started_again) == (server, False)
        assert status(home) == server
        env = _environ_of(server.pid)
        assert env["PREFECT_HOME"] == str(home)
        assert env["PREFECT_SERVER_ANALYTICS_ENABLED"] == "false"
        assert env["DO_NOT_TRACK"] == "1"
        leaked = [k for k, v in env.items() if PLANTED in v or HOST_GH_TOKEN in v]
        assert leaked == []
        assert not [k for k in env if k.startswith("SWARM_")]
        assert (home / "prefect.db").is_file()
        assert _connection_survives_idle(server.port, idle_s=6.0)
        # Another data dir whose record points at this server's port is not served by it.
        other = tmp_path / "other" / "prefect"
        other.mkdir(parents=True)
        (other / "server.json").write_text(f'{{"pid": {server.pid}, "port": {server.port}}}')
        assert status(other) is None
    finally:
        stopped = stop(home)
    assert stopped == server
    assert status(home) is None
    assert stop(home) is None


def test_the_server_environment_is_an_allow_list() -> None:
    host = {
        "PATH": "/usr/bin",
        "LANG": "C.UTF-8",
        "PREFECT_LOGGING_LEVEL": "INFO",
        "PREFECT_API_URL": "https://api.prefect.cloud/api/accounts/x",
        "PREFECT_API_KEY": PLANTED,
        "SWARM_STORE_URL": "postgresql+psycopg://swarm:pw@db/swarm",
        "GH_TOKEN": HOST_GH_TOKEN,
        "SSH_AUTH_SOCK": "/tmp/agent.sock",
        "ANTHROPIC_API_KEY": PLANTED,
    }
    env = server_environment(host, Path("/data/prefect"))
    assert env == {
        "PATH": "/usr/bin",
        "LANG": "C.UTF-8",
        "PREFECT_LOGGING_LEVEL": "INFO",
        "PREFECT_HOME": "/data/prefect",
        "DO_NOT_TRACK": "1",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_API_KEEPALIVE_TIMEOUT": "65",
    }
    own = server_environment({"PREFECT_SERVER_API_KEEPALIVE_TIMEOUT": "120"}, Path("/p"))
    assert own["PREFECT_SERVER_API_KEEPALIVE_TIMEOUT"] == "120"


def test_a_record_of_a_dead_server_is_not_trusted(tmp_path: Path) -> None:
    home = tmp_path / "prefect"
    home.mkdir()
    # A pid that cannot be alive: the highest possible one, plus one.
    dead = int(Path("/proc/sys/kernel/pid_max").read_text()) + 1
    (home / "server.json").write_text(f'{{"pid": {dead}, "port": 4200}}')
    assert status(home) is None
    assert not (home / "server.json").exists()
    assert os.listdir(home) == []
