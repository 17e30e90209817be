"""Whether a process still runs, asked of the operating system (no signal is sent), and the
names holders of shared state go by (a receiver's claim, a rate-limit reservation), so that a
holder whose process ended is known to be gone at once on its own host."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable
from contextlib import suppress

_HOST = socket.gethostname()[:80]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    # A zombie child of this process still "exists"; reap it if it is ours.
    with suppress(ChildProcessError):
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    return True


def holder_name() -> str:
    """A new holder name for shared state: ``host:pid:token`` (the token tells a restarted
    process that got the same pid from the one before it)."""
    return f"{_HOST}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


_MINE: dict[int, str] = {}


def this_process() -> str:
    """This process's own holder name, the same for everything it holds (a fork is another
    process, with its own)."""
    pid = os.getpid()
    if pid not in _MINE:
        _MINE[pid] = holder_name()
    return _MINE[pid]


def dead_to(me: str) -> Callable[[str], bool]:
    """Whether another holder is known to be gone, as ``me`` can tell: a process of this host
    that no longer runs, or one with ``me``'s own process id and another token (a container
    restarted as pid 1 again). A holder on another host is gone only when its claim lapses."""
    host, pid, token = _parts(me)

    def dead(holder: str) -> bool:
        their_host, their_pid, their_token = _parts(holder)
        if their_host != host or their_pid is None:
            return False
        if their_pid == pid:
            return their_token != token
        return not pid_alive(their_pid)

    return dead


def _parts(holder: str) -> tuple[str, int | None, str]:
    pieces = holder.rsplit(":", 2)
    if len(pieces) != 3 or not pieces[1].isdigit():
        return holder, None, ""
    host, pid, token = pieces
    return host, int(pid), token
