"""The keeper of the local Prefect server ends it when nobody uses it or its folder is gone.

The keeper is exercised as it runs for real (its own process, its own process group), around a
small stand-in server so these tests cost no Prefect start; the real server under its keeper is
checked in tests/local/test_local_prefect.py.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agents.processes import pid_alive
from tests.ports import closed_port

WAIT_S = 60.0


@contextmanager
def kept_server(home: Path, idle_s: float) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """``python -m http.server`` under the keeper, as ``_launch`` starts the Prefect server."""
    home.mkdir(parents=True, exist_ok=True)
    port = closed_port()
    command = [sys.executable, "-m", "flows.local.server_keeper", str(home), str(port)]
    command += [str(idle_s), "--", sys.executable, "-m", "http.server", str(port)]
    command += ["--bind", "127.0.0.1"]
    log = (home / "server.log").open("ab")
    keeper = subprocess.Popen(
        command, stdout=log, stderr=subprocess.STDOUT, cwd=home.parent, start_new_session=True
    )
    try:
        deadline = time.monotonic() + WAIT_S
        while not _answers(port):
            assert time.monotonic() < deadline, "the stand-in server never answered"
            time.sleep(0.2)
        yield keeper, port
    finally:
        if keeper.poll() is None:
            os.killpg(keeper.pid, 15)
        keeper.wait(timeout=WAIT_S)
        log.close()


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def _ended(keeper: subprocess.Popen[bytes], within: float = WAIT_S) -> bool:
    try:
        keeper.wait(timeout=within)
    except subprocess.TimeoutExpired:
        return False
    return True


def test_a_server_nobody_uses_stops_after_the_idle_period(tmp_path: Path) -> None:
    home = tmp_path / "prefect"
    with kept_server(home, idle_s=2.0) as (keeper, port):
        assert _ended(keeper)
        assert not _answers(port), "the server itself must end with its keeper"
    assert "unused for" in (home / "server.log").read_text()


def test_a_server_with_an_open_connection_is_kept(tmp_path: Path) -> None:
    with kept_server(tmp_path / "prefect", idle_s=2.0) as (keeper, port):
        # An open connection is someone at work (the UI polls its API over one).
        with socket.create_connection(("127.0.0.1", port)):
            assert not _ended(keeper, within=8.0)
        assert _ended(keeper)


def test_a_server_whose_folder_is_deleted_stops(tmp_path: Path) -> None:
    home = tmp_path / "prefect"
    with kept_server(home, idle_s=3600.0) as (keeper, port):
        shutil.rmtree(home)
        assert _ended(keeper)
        assert not _answers(port)


def test_a_server_whose_folder_is_replaced_stops(tmp_path: Path) -> None:
    # `make clean` and a new demo: a folder of the same name is another server's home.
    home = tmp_path / "prefect"
    with kept_server(home, idle_s=3600.0) as (keeper, _):
        shutil.rmtree(home)
        home.mkdir()
        assert _ended(keeper)


def test_stopping_the_keeper_stops_the_server(tmp_path: Path) -> None:
    with kept_server(tmp_path / "prefect", idle_s=3600.0) as (keeper, port):
        keeper.terminate()  # only the keeper: it passes the stop on
        assert _ended(keeper)
        assert not _answers(port)
        assert not pid_alive(keeper.pid)
