"""The local Prefect server: started once in the background, reused, offline, given nothing
secret, and stopped on request."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import time
import urllib.request
from pathlib import Path

import pytest

from agents.processes import pid_alive
from flows.local.prefect_server import (
    PREFERRED_PORT,
    ensure_running,
    prefect_home,
    server_environment,
    status,
    stop,
)
from tests.conftest import HOST_GH_TOKEN
from tests.ports import port_taken

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


def _ui_settings(port: int) -> dict[str, object]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/ui-settings", timeout=10) as reply:
        found = json.loads(reply.read())
    assert isinstance(found, dict)
    return found


@pytest.mark.slow
def test_a_server_whose_data_directory_is_deleted_stops(tmp_path: Path) -> None:
    data = tmp_path / "clone" / ".swarm"
    home = prefect_home(data)
    server, _ = ensure_running(home)
    try:
        shutil.rmtree(tmp_path / "clone")  # the clone is removed; its server must not stay
        deadline = time.monotonic() + 60
        while pid_alive(server.pid) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not pid_alive(server.pid)
        assert not _servers_of(home), "the Prefect server outlived its keeper"
    finally:
        if pid_alive(server.pid):
            os.killpg(server.pid, signal.SIGKILL)


def _servers_of(home: Path) -> list[int]:
    """Processes whose Prefect home is ``home``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                env = _environ_of(int(entry.name))
            except OSError:
                continue
            if env.get("PREFECT_HOME") == str(home):
                found.append(int(entry.name))
    return found


@pytest.mark.slow
def test_one_server_is_started_reused_and_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLANTED)
    monkeypatch.setenv("SWARM_SEALING_KEY", PLANTED)
    monkeypatch.setenv("PREFECT_API_KEY", PLANTED)
    home = prefect_home(tmp_path / "data")
    with port_taken(PREFERRED_PORT):  # the UI must work on any port, not only on 4200
        server, started = ensure_running(home)
    try:
        assert started
        assert server.port != PREFERRED_PORT
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
        # The UI asks its own server where the API is: this server, whatever its port.
        assert _ui_settings(server.port)["api_url"] == server.api_url
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
        # Left from the shell by someone who once ran a server on 4200: never this server's.
        "PREFECT_UI_API_URL": "http://127.0.0.1:4200/api",
        # Another server's credentials: never this one's.
        "PREFECT_API_AUTH_STRING": PLANTED,
        "PREFECT_SERVER_API_AUTH_STRING": PLANTED,
    }
    env = server_environment(host, Path("/data/prefect"), 33571, "its-own-auth-string")
    assert env == {
        "PATH": "/usr/bin",
        "LANG": "C.UTF-8",
        "PREFECT_LOGGING_LEVEL": "INFO",
        "PREFECT_HOME": "/data/prefect",
        "DO_NOT_TRACK": "1",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_API_KEEPALIVE_TIMEOUT": "65",
        "PREFECT_SERVER_API_HOST": "127.0.0.1",
        "PREFECT_SERVER_API_PORT": "33571",
        "PREFECT_UI_API_URL": "http://127.0.0.1:33571/api",
        "PREFECT_UI_URL": "http://127.0.0.1:33571",
        "PREFECT_SERVER_API_AUTH_STRING": "its-own-auth-string",
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
