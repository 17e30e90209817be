"""Telling a running process from a finished one."""

from __future__ import annotations

import os
import subprocess
import sys

from agents.processes import pid_alive


def test_this_process_is_alive() -> None:
    assert pid_alive(os.getpid())


def test_a_finished_child_is_not_alive_even_before_it_is_reaped() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, still a zombie
    assert not pid_alive(child.pid)
    assert not pid_alive(child.pid)  # reaped by the first call: now simply gone
    child.wait()  # lets Popen see it is gone (it treats the missing child as exited)
