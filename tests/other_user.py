"""Another local user, for the tests where the attacker shares the machine.

The suite runs as root in CI, and root can become anyone: a forked child drops to ``nobody``
(uid 65534) and does what that user could do (make folders in a shared place, listen on a
socket, open the victim's files). Without root there is no second uid to act as, and the tests
skip, unless ``SWARM_TEST_REQUIRE_SECOND_UID=1`` (CI) makes that a failure.
"""

from __future__ import annotations

import os
import pwd
import select
import shutil
import socket
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REQUIRED = os.environ.get("SWARM_TEST_REQUIRE_SECOND_UID") == "1"


def _nobody() -> tuple[int, int]:
    try:
        entry = pwd.getpwnam("nobody")
    except KeyError:
        return 65534, 65534
    return entry.pw_uid, entry.pw_gid


OTHER_UID, OTHER_GID = _nobody()


def require_second_uid() -> None:
    """Skip (or fail, when CI requires it) unless this process can act as another user."""
    if os.geteuid() == 0 and OTHER_UID != 0:
        return
    reason = (
        f"acting as another local user (uid {OTHER_UID}) needs root; "
        f"this runs as uid {os.geteuid()}"
    )
    if REQUIRED:
        pytest.fail(f"SWARM_TEST_REQUIRE_SECOND_UID=1: {reason}")
    pytest.skip(reason)


def _become_other_user() -> None:
    os.setgroups([])
    os.setgid(OTHER_GID)
    os.setuid(OTHER_UID)


@contextmanager
def shared_folder() -> Iterator[Path]:
    """A folder every user may create things in, sticky like ``/tmp``, with a short path (a
    socket's path must fit in 107 bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="lt-", dir="/tmp"))
    folder.chmod(0o1777)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def as_other_user(work: Callable[[], str]) -> str:
    """What ``work`` returns when the other user runs it (in a forked child), or the name of
    the exception it raised, e.g. ``"PermissionError"``."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the other user: nothing but plain system calls, then out
        try:
            os.close(read_end)
            try:
                _become_other_user()
                answer = work()
            except Exception as exc:
                answer = type(exc).__name__
            os.write(write_end, answer.encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as answers:
        answer = answers.read().decode()
    os.waitpid(pid, 0)
    return answer


class Listener:
    """A socket another user listens on; counts the connections it gets and the bytes sent."""

    def __init__(self, pid: int, stop: int, report: int) -> None:
        self._pid, self._stop, self._report = pid, stop, report
        self._counts: tuple[int, int] | None = None

    def received(self) -> tuple[int, int]:
        """Stop listening: (connections, bytes) it received."""
        if self._counts is None:
            os.close(self._stop)
            with os.fdopen(self._report, "rb") as report:
                counts = report.read().split()
            os.waitpid(self._pid, 0)
            self._counts = (int(counts[0]), int(counts[1])) if len(counts) == 2 else (-1, -1)
        return self._counts


@contextmanager
def listening_as_other_user(
    make_socket_path: Callable[[], Path], *, bind_first: bool = False
) -> Iterator[Listener]:
    """Another user listens on the socket at the path ``make_socket_path`` makes (as that user,
    so its folders are theirs). ``bind_first``: the socket file is made as root and only the
    listening process is the other user's (a file that passes every owner check, a listener
    that is not ours)."""
    ready_r, ready_w = os.pipe()
    stop_r, stop_w = os.pipe()
    report_r, report_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            for fd in (ready_r, stop_w, report_r):
                os.close(fd)
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            if bind_first:
                server.bind(str(make_socket_path()))
                _become_other_user()
            else:
                _become_other_user()
                path = make_socket_path()
                server.bind(str(path))
                path.chmod(0o777)
            server.listen(8)
            os.write(ready_w, b"ready")
            connections = received = 0
            while True:
                readable, _, _ = select.select([server.fileno(), stop_r], [], [])
                if stop_r in readable:
                    break
                conn, _ = server.accept()
                connections += 1
                conn.settimeout(5.0)
                try:
                    while chunk := conn.recv(1 << 16):
                        received += len(chunk)
                except OSError:
                    pass
                conn.close()
            os.write(report_w, f"{connections} {received}".encode())
        finally:
            os._exit(0)
    for fd in (ready_w, stop_r, report_w):
        os.close(fd)
    with os.fdopen(ready_r, "rb") as ready:
        if ready.read(5) != b"ready":
            os.waitpid(pid, 0)
            raise AssertionError("the other user's listener did not start")
    listener = Listener(pid, stop_w, report_r)
    try:
        yield listener
    finally:
        listener.received()
