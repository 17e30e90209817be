"""Warm start for ``swarm run``: hand the command to a process that has the heavy libraries
loaded already, instead of loading them again.

Every ``swarm run`` spent about half its time importing: anthropic (~1,500 pydantic models),
githubkit, SQLAlchemy and Alembic, ~5 s of CPU before the first request (bench/first_hour.py).
Next to the local Prefect server (:mod:`flows.local.prefect_server`) runs a small server
(:mod:`flows.local.warm_server`) that imports those once and, for each command, forks a child that
takes over the caller's terminal (its stdin, stdout and stderr are passed over a Unix socket),
working directory, environment and arguments, runs the command as this process would have, and
reports its exit status. Prefect itself is not preloaded: it reads its settings at import, so
each child imports it with the caller's environment.

Only the local set-up uses it (no ``PREFECT_API_URL``, no Prefect profile with an API): that is
where a person runs the command again and again. Anything unusual falls back to running here:
no socket yet, a server of older code (it steps aside), a refused connection.

The socket carries the caller's whole environment (the Anthropic key, the sealing key) and its
terminal, so whoever listens on it gets them. It lives in this user's runtime folder
(:func:`agents.private_files.runtime_folder`, never under the current folder, which another
user or a cloned repository's ``.swarm`` link may control), named by a digest of the Prefect
home so that two data directories do not share one. Before sending anything the client checks
that folder, the socket's owner and the listening process's uid (``SO_PEERCRED``); anything
off and the command runs here, with one warning line.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import socket
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

from agents.private_files import runtime_folder, unsafe_folder, unsafe_socket
from agents.processes import pid_alive

PID_NAME = "warm.pid"
LOG_NAME = "warm.log"
# The commands worth a warm start: the ones that run the flow.
WARM_COMMANDS = ("run",)
_CODE_ROOT = Path(__file__).resolve().parents[2]
_CODE_DIRS = ("agents", "flows", "sandbox")
_HEADER = struct.Struct("!I")
# struct ucred: pid, uid, gid.
_CRED = struct.Struct("3i")


def code_fingerprint() -> str:
    """Which code a warm server runs: the interpreter and every source file's size and mtime.
    A server whose fingerprint differs from the caller's serves nothing (it exits)."""
    digest = hashlib.sha256(f"{sys.executable}\0{sys.version}".encode())
    for folder in _CODE_DIRS:
        for path in sorted((_CODE_ROOT / folder).rglob("*.py")):
            stat = path.stat()
            digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def socket_path(home: Path) -> Path:
    """The socket of the warm server of ``home`` (a resolved Prefect home). A short name: a Unix
    socket's path must fit in 107 bytes."""
    key = hashlib.sha256(str(home).encode()).hexdigest()[:16]
    return runtime_folder() / f"warm-{key}.sock"


def peer_uid(conn: socket.socket) -> int | None:
    """The uid of the process at the other end of ``conn`` as the kernel recorded it when it
    connected or listened, or None where the platform cannot say."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    _pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, option, _CRED.size))
    return int(uid)


def _untrusted(path: Path) -> str | None:
    """Why the socket at ``path`` may be someone else's, or None when its folder and the file
    are this user's alone. None as well when there is no socket (no server yet)."""
    if not path.parent.exists():
        return None
    reason = unsafe_folder(path.parent)
    if reason is not None or not os.path.lexists(path):
        return reason
    return unsafe_socket(path)


def _warn(reason: str) -> None:
    print(
        f"swarm: warning: not using the warm starter ({reason}); running the command here",
        file=sys.stderr,
    )


def send_message(
    conn: socket.socket, message: dict[str, Any], fds: list[int] | None = None
) -> None:
    body = json.dumps(message).encode()
    data = _HEADER.pack(len(body)) + body
    if fds:
        socket.send_fds(conn, [data], fds)
    else:
        conn.sendall(data)


def receive_message(conn: socket.socket, *, max_fds: int = 0) -> tuple[dict[str, Any], list[int]]:
    """One length-prefixed JSON message and the descriptors that came with it; ``({}, [])``
    when the peer closed the connection first."""
    if max_fds:
        data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, max_fds)
    else:
        data, fds = conn.recv(1 << 16), []
    while len(data) < _HEADER.size or len(data) < _HEADER.size + _HEADER.unpack_from(data)[0]:
        more = conn.recv(1 << 16)
        if not more:
            for fd in fds:
                os.close(fd)
            return {}, []
        data += more
    (size,) = _HEADER.unpack_from(data)
    message = json.loads(data[_HEADER.size : _HEADER.size + size])
    return (message if isinstance(message, dict) else {}), list(fds)


def warm_command(args: list[str]) -> bool:
    """Whether ``swarm ARGS`` may run warm: a flow-running command, on the local set-up."""
    words = [a for a in args if not a.startswith("-")]
    if not words or words[0] not in WARM_COMMANDS or "--help" in args or "-h" in args:
        return False
    from flows.local.env import configured_api_url

    return configured_api_url() is None


def run_warm(args: list[str], home: Path) -> int | None:
    """Run ``swarm ARGS`` in a child of the warm server of ``home``: its exit status, or None
    when no (current) warm server took it, and the caller runs the command itself."""
    if not hasattr(socket, "SO_PEERCRED"):
        return None  # the listener cannot be proven to be ours: no warm start on this platform
    path = socket_path(home)
    reason = _untrusted(path)
    if reason is not None:
        _warn(reason)
        return None
    if not os.path.lexists(path):
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(2.0)
        conn.connect(str(path))
        uid = peer_uid(conn)
        if uid != os.geteuid():
            # Nothing has been sent yet; the environment never leaves this process.
            conn.close()
            _warn(f"{path} is served by another user (uid {uid})")
            return None
        request = {
            "argv": args,
            "cwd": os.getcwd(),
            "env": dict(os.environ),
            "fingerprint": code_fingerprint(),
        }
        send_message(conn, request, [0, 1, 2])
        started, _ = receive_message(conn)
    except (OSError, ValueError):
        conn.close()
        return None
    if "pid" not in started:
        conn.close()  # a server of older code, or one shutting down
        return None
    conn.settimeout(None)
    return _wait_for_exit(conn, int(started["pid"]))


def _wait_for_exit(conn: socket.socket, pid: int) -> int:
    """The child's exit status. Ctrl-C here reaches the child (it is not in this terminal's
    process group): it stops as the command would, with status 130."""
    with conn:
        while True:
            try:
                ended, _ = receive_message(conn)
            except KeyboardInterrupt:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGINT)
                continue
            if "exit" in ended:
                return int(ended["exit"])
            print("error: the warm runner stopped before the command ended", file=sys.stderr)
            return 1


def start(home: Path, watched_pid: int) -> None:
    """Start the warm server for ``home`` in the background (it loads for a few seconds; until
    it listens, commands run cold). A running one is left alone."""
    if not hasattr(socket, "SO_PEERCRED"):
        return  # no client here would trust it (run_warm)
    recorded = recorded_pid(home)
    if recorded is not None and pid_alive(recorded):
        return  # running, or still loading (it writes its pid first)
    # The server needs no credentials: each command brings its caller's environment.
    env = {k: v for k, v in os.environ.items() if not _secretish(k)}
    with (home / LOG_NAME).open("ab") as log:
        subprocess.Popen(
            [sys.executable, "-m", "flows.local.warm_server", str(home), str(watched_pid)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=home,
            start_new_session=True,
        )


def _secretish(name: str) -> bool:
    upper = name.upper()
    return upper.startswith(("SWARM_", "ANTHROPIC_", "GITHUB_", "GH_")) or any(
        word in upper for word in ("TOKEN", "SECRET", "KEY", "PASSWORD", "AUTH")
    )


def running_pid(home: Path) -> int | None:
    """The warm server of ``home`` when it runs and listens."""
    pid = recorded_pid(home)
    return pid if pid is not None and pid_alive(pid) and socket_path(home).exists() else None


def recorded_pid(home: Path) -> int | None:
    try:
        return int((home / PID_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
