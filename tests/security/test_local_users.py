"""Issue 24, class 3: another user of the same machine.

The warm starter's socket carries a command's whole environment (the Anthropic key, the sealing
key), its arguments and its terminal; the data directory holds the store's transcripts. Each test
is the attack as another local user (uid 65534, a forked child of this root process) would make
it: a ``.swarm`` planted where the victim runs ``swarm``, a link committed in a repository, the
socket folder made first in a shared ``/tmp``, a listener of theirs behind a socket file of ours,
a connection to the victim's warm server, a read of the victim's store. The victim runs the real
CLI (``python -m flows``) in a process of its own.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents.private_files import PrivatePathError, make_runtime_folder
from agents.processes import pid_alive
from agents.store import Store
from flows.local.prefect_server import prefect_home
from flows.local.warm_client import (
    code_fingerprint,
    receive_message,
    send_message,
    socket_path,
    start,
)
from tests.other_user import (
    OTHER_UID,
    as_other_user,
    listening_as_other_user,
    require_second_uid,
    shared_folder,
)
from tests.paths import ROOT
from tests.python_process import run_python
from tests.waiting import wait_for

PLANTED_KEY = "sk-ant-api03-localusersplantedkey000000000000000000000000000000"
PLANTED_SEAL = "bG9jYWx1c2Vyc3BsYW50ZWRzZWFsaW5na2V5MDAwMDA="


@pytest.fixture
def shared(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A sticky folder every user may write to, standing in for ``/tmp`` (``TMPDIR``), with no
    ``XDG_RUNTIME_DIR``: the runtime folder is ``<shared>/swarm-<uid>``, where another user can
    try to be first."""
    require_second_uid()
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    with shared_folder() as folder:
        monkeypatch.setenv("TMPDIR", str(folder))
        yield folder


def _victim_env(shared: Path, tmp_path: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SWARM_", "PREFECT_")) and k != "XDG_RUNTIME_DIR"
    }
    env.update(
        ANTHROPIC_API_KEY=PLANTED_KEY,
        SWARM_SEALING_KEY=PLANTED_SEAL,
        TMPDIR=str(shared),
        # No Prefect profile: the local set-up, where the warm starter is used.
        PREFECT_HOME=str(tmp_path / "no-prefect-profile"),
        PYTHONPATH=str(ROOT),
    )
    return env


def _swarm(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_python("-m", "flows", *args, env=env, cwd=cwd)


def _ran_cold(done: subprocess.CompletedProcess[str]) -> None:
    """``swarm run --bogus`` ran in the victim's own process: its usage error, no traceback."""
    assert done.returncode == 2, done.stderr
    assert "error: no such option: --bogus" in done.stderr
    assert "Traceback" not in done.stderr


def _warnings(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stderr.splitlines() if "warm starter" in line]


def _make_planted_home(where: Path) -> Path:
    """As the other user: ``<where>/prefect/warm.sock``, the socket path main used to trust."""
    (where / "prefect").mkdir(parents=True, mode=0o777)
    where.chmod(0o777)
    return where / "prefect" / "warm.sock"


@pytest.mark.parametrize("how", ["a .swarm folder in a shared folder", "a committed .swarm link"])
def test_a_dot_swarm_of_another_user_receives_nothing_and_the_command_runs_cold(
    how: str, shared: Path, tmp_path: Path
) -> None:
    if how == "a committed .swarm link":
        # A repository the victim cloned carries `.swarm -> <a folder the attacker owns>`.
        planted, cwd = shared / "theirs", tmp_path / "repo"
        cwd.mkdir()
        (cwd / ".swarm").symlink_to(planted)
    else:
        # The victim runs swarm in a shared folder where the attacker made `.swarm` first.
        planted, cwd = shared / ".swarm", shared
    with listening_as_other_user(lambda: _make_planted_home(planted)) as listener:
        done = _swarm(cwd, _victim_env(shared, tmp_path), "run", "--bogus")
        connections, received = listener.received()
    assert (connections, received) == (0, 0)
    _ran_cold(done)
    assert socket_path(prefect_home(cwd / ".swarm")).parent == shared / f"swarm-{os.geteuid()}"


@pytest.mark.parametrize("mode", [0o700, 0o777])
def test_a_socket_folder_another_user_made_first_is_refused_before_anything_is_sent(
    mode: int, shared: Path, tmp_path: Path
) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    path = socket_path(prefect_home(cwd / ".swarm"))

    def squat() -> Path:
        path.parent.mkdir(mode=mode)
        path.parent.chmod(mode)
        return path

    with listening_as_other_user(squat) as listener:
        done = _swarm(cwd, _victim_env(shared, tmp_path), "run", "--bogus")
        connections, received = listener.received()
    assert (connections, received) == (0, 0)
    _ran_cold(done)
    (warning,) = _warnings(done)
    assert f"belongs to another user (uid {OTHER_UID})" in warning
    assert PLANTED_KEY not in done.stderr
    # The victim's own warm server will not serve from that folder either.
    with pytest.raises(PrivatePathError, match="belongs to another user"):
        make_runtime_folder(path.parent)


def test_a_listener_of_another_uid_behind_a_socket_file_of_ours_gets_nothing(
    shared: Path, tmp_path: Path
) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    path = socket_path(prefect_home(cwd / ".swarm"))
    make_runtime_folder(path.parent)  # the victim's own 0700 folder
    # The file is made as the victim (root) and passes every owner check; only the process
    # that listens is the other user's, which only SO_PEERCRED can tell.
    with listening_as_other_user(lambda: path, bind_first=True) as listener:
        done = _swarm(cwd, _victim_env(shared, tmp_path), "run", "--bogus")
        connections, received = listener.received()
    assert received == 0
    assert connections == 1  # the client connected, asked who listens, and sent nothing
    _ran_cold(done)
    (warning,) = _warnings(done)
    assert f"served by another user (uid {OTHER_UID})" in warning


def test_the_warm_server_turns_away_a_caller_of_another_uid(shared: Path, tmp_path: Path) -> None:
    home = tmp_path / "prefect"
    home.mkdir()
    prefect_stand_in = subprocess.Popen(["sleep", "600"])
    start(home, prefect_stand_in.pid)
    path = socket_path(home)
    try:
        wait_for(path.exists, "the warm server's socket")
        server_pid = int((home / "warm.pid").read_text())
        # Say the modes were loosened by mistake: the server's own check still holds.
        path.parent.chmod(0o777)
        path.chmod(0o777)
        request = {
            "argv": ["run", "--bogus"],
            "cwd": "/",
            "env": {"PATH": os.environ["PATH"]},
            "fingerprint": code_fingerprint(),
        }

        def call_the_victims_server() -> str:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.settimeout(10.0)
                conn.connect(str(path))
                try:
                    send_message(conn, request, [0, 1, 2])
                    answer, _ = receive_message(conn)
                except (ConnectionResetError, BrokenPipeError):
                    return "turned away"  # closed unread: the server read nothing of it
            return "started a command" if "pid" in answer else "turned away"

        assert as_other_user(call_the_victims_server) == "turned away"
        assert pid_alive(server_pid)  # it goes on serving its own user
        log = (home / "warm.log").read_text()
        assert f"refused a caller of uid {OTHER_UID}" in log
    finally:
        prefect_stand_in.kill()
        prefect_stand_in.wait()
    wait_for(lambda: not path.exists(), "the warm server to end", timeout=30)


def _store_modes(data_dir: Path) -> dict[str, str]:
    return {
        p.name: f"{p.stat().st_mode & 0o777:04o}"
        for p in [data_dir, *sorted(data_dir.glob("swarm.db*"))]
    }


def test_the_data_directory_is_0700_and_the_store_0600_so_another_user_reads_nothing(
    tmp_path: Path,
) -> None:
    require_second_uid()
    tmp_path.chmod(0o755)  # the attacker may reach the folder above, as a home folder allows
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWARM_")}
    env["PYTHONPATH"] = str(ROOT)
    done = run_python(
        "-c",
        "import os, sys; os.umask(0o022); from flows.cli.app import main; main()",
        "memory",  # a command that makes the store (reading ones refuse a missing default)
        "add",
        "A fact to keep",
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    data_dir = tmp_path / ".swarm"
    db = data_dir / "swarm.db"
    assert as_other_user(lambda: str(len(db.read_bytes()))) == "PermissionError"
    assert as_other_user(lambda: str(os.listdir(data_dir))) == "PermissionError"
    modes = _store_modes(data_dir)
    assert modes[".swarm"] == "0700"
    assert modes["swarm.db"] == "0600"
    assert set(modes.values()) <= {"0700", "0600"}, modes  # the -wal and -shm files too


def test_an_existing_open_data_directory_and_store_are_tightened(tmp_path: Path) -> None:
    """An install made before swarm chose its modes: a 0755 folder and a 0644 store."""
    data_dir = tmp_path / ".swarm"
    Store.open(None, data_dir).close()
    data_dir.chmod(0o755)
    (data_dir / "swarm.db").chmod(0o644)
    Store.open(None, data_dir).close()
    assert _store_modes(data_dir)[".swarm"] == "0700"
    assert _store_modes(data_dir)["swarm.db"] == "0600"


def test_a_linked_data_directory_is_used_but_its_mode_left_alone(tmp_path: Path) -> None:
    """A link may point at a folder that is not swarm's: swarm does not chmod it."""
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o755)
    target.chmod(0o755)
    link = tmp_path / ".swarm"
    link.symlink_to(target)
    Store.open(None, link).close()
    assert f"{target.stat().st_mode & 0o777:04o}" == "0755"
    assert f"{(target / 'swarm.db').stat().st_mode & 0o777:04o}" == "0600"


def test_a_data_directory_of_another_user_is_refused_in_one_line(
    shared: Path, tmp_path: Path
) -> None:
    theirs = shared / ".swarm"

    def make_theirs() -> str:
        theirs.mkdir(mode=0o777)
        return "made"

    assert as_other_user(make_theirs) == "made"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWARM_")}
    env["PYTHONPATH"] = str(ROOT)
    done = _swarm(shared, env, "runs")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: the data directory (SWARM_DATA_DIR) .swarm belongs to another user "
        f"(uid {OTHER_UID}), who could read and replace what swarm keeps there; use a folder "
        "of your own"
    ]
    assert not (theirs / "swarm.db").exists()


def test_the_socket_is_never_under_the_current_folder(tmp_path: Path) -> None:
    here = Path.cwd()
    for data_dir in (Path(".swarm"), tmp_path / ".swarm"):
        path = socket_path(prefect_home(data_dir))
        assert here not in path.parents and tmp_path not in path.parents
        assert len(os.fsencode(path)) < 108  # what a Unix socket path may hold
    assert socket_path(prefect_home(tmp_path / "a")) != socket_path(prefect_home(tmp_path / "b"))
    assert sys.platform != "linux" or hasattr(socket, "SO_PEERCRED")
