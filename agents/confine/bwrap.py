"""The ``bwrap`` command line of one confined run: which namespaces, which folders, which
environment, and what the sandbox's ``/etc`` holds.

What the run sees, and why:

- Every namespace bwrap knows (``--unshare-all``): a network namespace holding only its own
  loopback (no route out, no host port, no DNS), its own pid namespace (its ``/proc`` lists its
  own processes, never the parent's environment), IPC, UTS, cgroup, and a user namespace that
  cannot make another (``--disable-userns``, less kernel to attack).
- The system's programs read-only: ``/usr`` and the ``/bin``, ``/sbin`` and ``/lib*`` links or
  folders, so the system ``python3`` and the shell run.
- Not the host's ``/etc``: it holds credentials on real machines (``pip.conf`` index tokens,
  apt's ``auth.conf``, a system ``gitconfig`` credential helper, ``environment``, SSH host keys).
  The sandbox's ``/etc`` is an empty tmpfs with a made-up ``passwd``/``group``/``hosts`` and only
  the host files a program needs to start: the loader's cache and config, Debian's
  ``alternatives`` links, the time zone, ``nsswitch.conf``.
- The throwaway copy read-write at :data:`WORKDIR`, the one place its writes outlive the run
  (and only until the runner deletes the copy); a fresh size-bounded tmpfs for ``/tmp``, HOME and
  ``/dev/shm``; a minimal ``/dev``; all else read-only, bwrap's own root and ``/dev`` included
  (unbounded tmpfs folders); nothing else of the host (no ``/home``, ``/root``, ``/work``,
  ``/run``, ``/var``, ``/sys``, no data directory, no store).
- The environment from :data:`ENVIRONMENT` only (``--clearenv`` first): no token, key or
  ``SWARM_`` setting can be inherited, whatever the parent holds.
- A session of its own (``--new-session``: no ``TIOCSTI`` into our terminal), killed with its
  parent (``--die-with-parent``), the kernel limits applied by ``prlimit`` before the command.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from contextlib import suppress

from agents.confine.limits import Limits

WORKDIR = "/repo"
HOME = "/home/sandbox"
# Paths inside the sandbox (fresh tmpfs folders of its own), never the host's.
TMP = "/tmp"  # noqa: S108
SHM = "/dev/shm"  # noqa: S108
SANDBOX_UID = 1000
SANDBOX_GID = 1000
# The whole environment of a run: nothing is copied from the parent's.
ENVIRONMENT: dict[str, str] = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": HOME,
    "USER": "sandbox",
    "LOGNAME": "sandbox",
    "TMPDIR": TMP,
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
    "CI": "true",
}
# The host's /etc files a program may need to start, none of them a secret.
HOST_ETC = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
    "/etc/nsswitch.conf",
)
MADE_UP_ETC: dict[str, str] = {
    "/etc/passwd": (
        f"root:x:0:0:root:/root:/usr/sbin/nologin\n"
        f"sandbox:x:{SANDBOX_UID}:{SANDBOX_GID}:sandbox:{HOME}:/bin/sh\n"
        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
    ),
    "/etc/group": f"root:x:0:\nsandbox:x:{SANDBOX_GID}:\nnogroup:x:65534:\n",
    "/etc/hosts": "127.0.0.1 localhost sandbox\n::1 localhost\n",
    "/etc/hostname": "sandbox\n",
}
# Top-level system folders: a link on merged-/usr systems (Debian 12), a folder on older ones.
SYSTEM_TOPS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
PRLIMIT = "/usr/bin/prlimit"


def system_mounts() -> list[str]:
    """``/usr`` read-only, and each top-level system folder as the host has it."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in SYSTEM_TOPS:
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    return args


def etc_mounts(data_fds: dict[str, int]) -> list[str]:
    """A tmpfs ``/etc`` with the made-up files (read from ``data_fds``, path -> a pipe's read
    end) and the harmless host files, then made read-only."""
    args = ["--tmpfs", "/etc"]
    for path, fd in data_fds.items():
        args += ["--ro-bind-data", str(fd), path]
    for path in HOST_ETC:
        args += ["--ro-bind-try", path, path]
    return [*args, "--remount-ro", "/etc"]


def bwrap_argv(
    bwrap: str,
    workdir_fd: int,
    data_fds: dict[str, int],
    info_fd: int,
    command: Sequence[str],
    limits: Limits,
) -> list[str]:
    """The whole command line: bwrap's options, then ``prlimit`` with the limits, then
    ``command`` (resolved on the sandbox's own ``PATH``). bwrap writes the host pid of the
    sandbox's pid 1 to ``info_fd``."""
    size = str(limits.scratch_bytes)
    args = [
        bwrap,
        "--info-fd",
        str(info_fd),
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_GID),
        "--hostname",
        "sandbox",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
    ]
    for name, value in ENVIRONMENT.items():
        args += ["--setenv", name, value]
    args += system_mounts()
    args += etc_mounts(data_fds)
    args += ["--proc", "/proc", "--dev", "/dev"]
    for folder in (TMP, HOME, SHM):
        args += ["--size", size, "--tmpfs", folder]
    args += ["--bind-fd", str(workdir_fd), WORKDIR, "--chdir", WORKDIR]
    # bwrap's own root and its /dev are tmpfs folders with no size (half the host's RAM each)
    # that the sandbox's user owns: writable, they would be an unbounded way round
    # scratch_bytes into the host's memory. Read-only once every mount point in them is made.
    args += ["--remount-ro", "/dev", "--remount-ro", "/"]
    return [*args, "--", PRLIMIT, *limits.prlimit_args(), "--", *command]


def open_made_up_etc() -> dict[str, int]:
    """A pipe per made-up ``/etc`` file, written and closed, its read end for bwrap (each file
    is far below a pipe's buffer, so the write never blocks)."""
    fds: dict[str, int] = {}
    try:
        for path, text in MADE_UP_ETC.items():
            read_end, write_end = os.pipe()
            fds[path] = read_end
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(text.encode())
    except BaseException:
        close_all(fds.values())
        raise
    return fds


def close_all(fds: Iterable[int]) -> None:
    for fd in fds:
        with suppress(OSError):
            os.close(fd)
