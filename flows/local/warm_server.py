"""The warm server: heavy libraries imported once, one forked child per ``swarm`` command.

Run as ``python -m flows.local.warm_server HOME WATCHED_PID`` by
:func:`flows.local.warm_client.start`, next to the local
Prefect server of ``HOME``; it ends when that server's process ends, after
``IDLE_LIMIT_S`` without a command, or when a caller brings a different code fingerprint. The
socket is the caller's only way in: it is created in this user's runtime folder (0700, refused
when another user made it first), readable and writable by this user only, and carries the
caller's environment (which holds credentials) and nothing else. A caller of another uid is
turned away before anything is read: whoever gets a command run here runs it as this user.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

from agents.private_files import PrivatePathError, make_runtime_folder
from agents.processes import pid_alive
from flows.local.warm_client import (
    PID_NAME,
    code_fingerprint,
    peer_uid,
    receive_message,
    recorded_pid,
    send_message,
    socket_path,
)

# Imported once here. Nothing that reads its settings at import (Prefect does): each child
# imports those with the caller's environment.
PRELOAD = (
    "anthropic",
    "githubkit",
    "sqlalchemy",
    "alembic",
    "httpx",
    "pydantic_settings",
    "cryptography",
    "jwt",
    "yaml",
    "tenacity",
)
IDLE_LIMIT_S = 30 * 60.0
POLL_S = 2.0


def serve(home: Path, watched_pid: int) -> None:
    (home / PID_NAME).write_text(str(os.getpid()), encoding="utf-8")
    for name in PRELOAD:
        importlib.import_module(name)
    fingerprint = code_fingerprint()
    if threading.active_count() != 1:
        # fork() copies only the calling thread: a helper thread started by an import would
        # leave its locks held in every child. Commands keep running cold.
        raise SystemExit("a preloaded module started a thread; not serving")
    listener = _listen(home)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    idle_since = time.monotonic()
    try:
        while pid_alive(watched_pid) and time.monotonic() - idle_since < IDLE_LIMIT_S:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            idle_since = time.monotonic()
            caller = peer_uid(conn)
            if caller != os.geteuid():
                print(f"refused a caller of uid {caller}", flush=True)
                conn.close()
                continue
            if not _hand_over(conn, listener, fingerprint):
                break
    finally:
        listener.close()
        with contextlib.suppress(FileNotFoundError):
            if recorded_pid(home) == os.getpid():
                socket_path(home).unlink()
                (home / PID_NAME).unlink()


def _listen(home: Path) -> socket.socket:
    path = socket_path(home)
    try:
        make_runtime_folder(path.parent)
    except PrivatePathError as exc:
        raise SystemExit(f"not serving: {exc}") from None
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o077)
    try:
        listener.bind(str(temporary))
    finally:
        os.umask(old_umask)
    listener.listen(8)
    listener.settimeout(POLL_S)
    os.replace(temporary, path)  # callers never see a socket that does not listen yet
    return listener


def _hand_over(conn: socket.socket, listener: socket.socket, fingerprint: str) -> bool:
    """Fork a child for one command; False when this server is stale and should end."""
    with conn:
        try:
            conn.settimeout(5.0)
            request, fds = receive_message(conn, max_fds=3)
        except (OSError, ValueError):
            return True
        if request.get("fingerprint") != fingerprint or len(fds) != 3:
            for fd in fds:
                os.close(fd)
            send_message(conn, {"stale": True})
            return False
        if os.fork() == 0:
            _child(conn, listener, request, fds)
        for fd in fds:
            os.close(fd)
    return True


def _child(
    conn: socket.socket, listener: socket.socket, request: dict[str, Any], fds: list[int]
) -> None:
    """Become the caller's command: its terminal, directory, environment and arguments."""
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        listener.close()
        conn.settimeout(None)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        sys.stdin, sys.stdout, sys.stderr = (_text_stream(fd) for fd in (0, 1, 2))
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        args = [str(a) for a in request["argv"]]
        sys.argv = ["swarm", *args]
        send_message(conn, {"pid": os.getpid()})
        from flows.cli.app import leave, run_command

        code = run_command(args)
        leave(code, before_exit=lambda: send_message(conn, {"exit": code}))
    finally:
        os._exit(code)


def _text_stream(fd: int) -> io.TextIOWrapper:
    """A text stream on ``fd`` buffered as Python buffers its own standard streams."""
    tty = os.isatty(fd)
    mode = "rb" if fd == 0 else "wb"
    raw = io.FileIO(fd, mode, closefd=False)
    return io.TextIOWrapper(
        io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw),
        encoding="utf-8",
        errors="backslashreplace" if fd == 2 else "strict",
        line_buffering=tty or fd == 2,
    )


if __name__ == "__main__":
    serve(Path(sys.argv[1]), int(sys.argv[2]))
