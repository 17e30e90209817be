"""Start one command under ``bwrap`` and see it end: the wall clock, the output cap, and the
kill of its whole process group.

The caller has checked that the sandbox works (:mod:`agents.confine.probe`) and made the
throwaway copy; this module only launches. When this process is root, bwrap itself runs as an
unprivileged host user (:data:`HOST_USER`): root is exempt from the kernel's process limit, and a
sandbox that got out of its namespaces would be nobody rather than root. No ``preexec_fn``: the
user switch, the new session and the inherited file descriptors are all done by
:class:`subprocess.Popen` itself, which is safe in a threaded process (Prefect runs tasks in
threads); the resource limits are set inside the sandbox by ``prlimit``.
"""

from __future__ import annotations

import json
import os
import pwd
import select
import signal
import subprocess
import time
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path

from agents.confine.bwrap import bwrap_argv, close_all, open_made_up_etc
from agents.confine.limits import Limits
from agents.confine.output import CappedOutput
from agents.confine.result import CPU_TIME, OUTPUT_FLOOD, WALL_TIME, ConfinedRun
from agents.redact import redact

_CHUNK = 65536
# How long a killed sandbox may take to be gone, all its processes with it.
_REAP_SECONDS = 10.0


def _nobody() -> tuple[int, int]:
    try:
        entry = pwd.getpwnam("nobody")
    except KeyError:
        return 65534, 65534
    return entry.pw_uid, entry.pw_gid


# The host user bwrap runs as when we are root; None: bwrap runs as us.
HOST_USER: tuple[int, int] | None = _nobody() if os.geteuid() == 0 else None


def give_to_sandbox(path: Path) -> None:
    """Make ``path`` (a throwaway copy in a fresh folder of ours) the sandbox's to write, when
    bwrap runs as another host user. bwrap finds a bound folder by its path as that user, so
    the fresh folder around the copy becomes 0711 (passable, not listable: its random name and
    the copy's are the only way in) and the copy that user's alone (0700). Links are changed,
    never followed."""
    if HOST_USER is None:
        return
    uid, gid = HOST_USER
    path.parent.chmod(0o711)
    os.lchown(path, uid, gid)
    path.chmod(0o700)
    for root, dirs, files in os.walk(path):
        for name in (*dirs, *files):
            os.lchown(os.path.join(root, name), uid, gid)


def launch(bwrap: str, workdir: Path, command: Sequence[str], limits: Limits) -> ConfinedRun:
    """Run ``command`` confined, with ``workdir`` as its writable copy; its output redacted."""
    started = time.monotonic()
    workdir_fd = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    data_fds = open_made_up_etc()
    info_read, info_write = os.pipe()
    fds = (workdir_fd, info_write, *data_fds.values())
    try:
        argv = bwrap_argv(bwrap, workdir_fd, data_fds, info_write, command, limits)
        uid, gid = HOST_USER if HOST_USER else (None, None)
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            pass_fds=fds,
            start_new_session=True,
            cwd="/",
            env={},
            user=uid,
            group=gid,
            extra_groups=[] if HOST_USER else None,
        )
    except BaseException:
        os.close(info_read)
        raise
    finally:
        close_all(fds)
    assert process.stdout is not None
    deadline = started + limits.wall_seconds
    sandbox = _sandbox_pid1(info_read, deadline)
    output = CappedOutput(limits.output_bytes)
    try:
        stopped, status = _follow(process, output, deadline)
        if sandbox is not None:
            # When its pid 1 is gone, so is every process of its pid namespace: the kernel
            # kills them and waits for them before pid 1's exit completes. bwrap's own exit
            # does not wait for that when we killed it.
            select.select([sandbox], [], [], _REAP_SECONDS)
    finally:
        if sandbox is not None:
            os.close(sandbox)
    exit_code = os.waitstatus_to_exitcode(status)
    process.returncode = exit_code
    process.stdout.close()
    if exit_code < 0:  # bwrap itself was killed (by us): report it as the shell would
        exit_code = 128 - exit_code
    if stopped is None and exit_code == 128 + signal.SIGXCPU:
        stopped = CPU_TIME
    return ConfinedRun(
        command=tuple(command),
        exit_code=exit_code,
        stopped=stopped,
        truncated=output.truncated,
        duration_seconds=time.monotonic() - started,
        output_bytes=output.total,
        output=redact(output.text()),
    )


def _sandbox_pid1(info_read: int, deadline: float) -> int | None:
    """A pidfd of the sandbox's pid 1, from bwrap's ``--info-fd`` JSON (written and closed
    before the command starts), or None when bwrap wrote none (it failed first)."""
    said = b""
    try:
        while (remaining := deadline - time.monotonic()) > 0:
            readable, _, _ = select.select([info_read], [], [], remaining)
            chunk = os.read(info_read, 4096) if readable else b""
            if not chunk:
                break
            said += chunk
    finally:
        os.close(info_read)
    try:
        pid = int(json.loads(said)["child-pid"])
        return os.pidfd_open(pid)
    except (ValueError, KeyError, TypeError, OSError):
        return None


def _follow(
    process: subprocess.Popen[bytes], output: CappedOutput, deadline: float
) -> tuple[str | None, int]:
    """Read the output until it ends, then wait for the exit, both within the deadline; kill
    the process group at the deadline or on a flood. Returns (why it was stopped, the wait
    status)."""
    assert process.stdout is not None
    fd = process.stdout.fileno()
    stopped: str | None = None
    open_output = True
    pause = 0.005
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            stopped = WALL_TIME
            break
        if open_output:
            readable, _, _ = select.select([fd], [], [], remaining)
            if readable:
                chunk = os.read(fd, _CHUNK)
                if chunk:
                    output.add(chunk)
                    if output.flooding:
                        stopped = OUTPUT_FLOOD
                        break
                else:
                    open_output = False
            continue
        pid, status = os.waitpid(process.pid, os.WNOHANG)
        if pid:
            return None, status
        time.sleep(min(pause, remaining))
        pause = min(pause * 2, 0.05)
    # bwrap leads its process group; its death takes the sandbox's pid 1 with it
    # (--die-with-parent), and the kernel kills every process of the pid namespace.
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    _, status = os.waitpid(process.pid, 0)
    return stopped, status
