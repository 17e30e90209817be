"""Whether a process still runs, asked of the operating system (no signal is sent)."""

from __future__ import annotations

import os
from contextlib import suppress


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
