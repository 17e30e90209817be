"""The warm server: a command handed to it runs in the caller's terminal, directory and
environment and reports the caller's exit status; it steps aside for other code and ends with
the Prefect server it serves beside."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents.processes import pid_alive
from flows.local.warm_client import receive_message, running_pid, send_message, socket_path, start
from tests.python_process import run_python
from tests.waiting import wait_for

CLIENT = (
    "import sys; from pathlib import Path; from flows.local.warm_client import run_warm; "
    "code = run_warm(sys.argv[2:], Path(sys.argv[1])); sys.exit(99 if code is None else code)"
)
PLANTED_KEY = "sk-ant-api03-warmstartplantedkey0000000000000000000000000000"


@pytest.fixture
def warm_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    """A warm server beside a stand-in for the Prefect server (a sleeping process)."""
    home = tmp_path / "prefect"
    home.mkdir()
    prefect_stand_in = subprocess.Popen(["sleep", "600"])
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLANTED_KEY)
    start(home, prefect_stand_in.pid)
    wait_for(socket_path(home).exists, "the warm server's socket")
    pid = int((home / "warm.pid").read_text())
    try:
        yield home, prefect_stand_in
    finally:
        prefect_stand_in.kill()
        prefect_stand_in.wait()
        wait_for(lambda: not pid_alive(pid), "the warm server to end")


def _client(
    home: Path, args: list[str], env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    return run_python("-c", CLIENT, str(home), *args, env=env, cwd=cwd)


def test_a_warm_command_uses_the_callers_environment_directory_and_exit_status(
    warm_home: tuple[Path, subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    home, _ = warm_home
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWARM_")}
    env["SWARM_STORE_ULR"] = "sqlite:///nowhere.db"  # only the caller has this mistake
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()
    done = _client(home, ["run", "--repo", "acme/widgets", "--dry-run"], env, workdir)
    assert done.returncode == 2, done.stderr
    assert "SWARM_STORE_ULR" in done.stderr and "SWARM_STORE_URL" in done.stderr
    assert "Traceback" not in done.stderr and "nowhere.db" not in done.stderr
    usage = _client(home, ["run", "--bogus"], env, workdir)
    assert usage.returncode == 2
    assert usage.stderr.startswith("error: no such option: --bogus")


def test_the_warm_server_holds_no_credentials(
    warm_home: tuple[Path, subprocess.Popen[bytes]],
) -> None:
    home, _ = warm_home
    pid = int((home / "warm.pid").read_text())
    assert running_pid(home) == pid
    environ = Path(f"/proc/{pid}/environ").read_bytes()
    assert PLANTED_KEY.encode() not in environ
    assert b"ANTHROPIC_API_KEY=" not in environ
    assert socket_path(home).stat().st_mode & 0o077 == 0


def test_a_server_of_other_code_steps_aside_and_the_command_runs_cold(
    warm_home: tuple[Path, subprocess.Popen[bytes]],
) -> None:
    home, _ = warm_home
    pid = int((home / "warm.pid").read_text())
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(str(socket_path(home)))
        request = {"argv": ["run"], "cwd": "/", "env": {}, "fingerprint": "older code"}
        send_message(conn, request, [0, 1, 2])
        answer, _ = receive_message(conn)
    assert answer == {"stale": True}
    wait_for(lambda: not pid_alive(pid), "the stale server to end", timeout=30)
    assert not socket_path(home).exists()
    done = _client(home, ["run", "--bogus"], dict(os.environ), home)
    assert done.returncode == 99  # nobody took it: the caller runs the command itself


def test_the_warm_server_ends_with_the_prefect_server(
    warm_home: tuple[Path, subprocess.Popen[bytes]],
) -> None:
    home, prefect = warm_home
    pid = int((home / "warm.pid").read_text())
    prefect.kill()
    prefect.wait()
    wait_for(lambda: not pid_alive(pid), "the warm server to end", timeout=30)
    assert not socket_path(home).exists()
    assert running_pid(home) is None


@pytest.mark.parametrize("configured", [None, "elsewhere/data"])
def test_the_warm_client_looks_where_the_settings_keep_the_data(
    configured: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agents.settings.model import load_settings
    from agents.settings.paths import data_dir_from

    for key in list(os.environ):
        if key.startswith("SWARM_"):
            monkeypatch.delenv(key)
    if configured is not None:
        monkeypatch.setenv("SWARM_DATA_DIR", configured)
    assert data_dir_from() == load_settings().data_dir
