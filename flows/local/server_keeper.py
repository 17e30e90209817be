"""The local Prefect server's keeper: the parent process that ends it when nobody uses it.

``prefect server start`` runs until someone stops it. Started in the background by a command, it
kept running for hours after its last use, and after its data directory was deleted (a removed
clone's server still answered half an hour later, on a database that no longer had a folder).
So the server runs as the child of this small process, which ends it when:

- its home folder is gone, or is another folder of the same name (``make clean`` then a new
  demo: the new demo starts a server of its own);
- nothing used it for the idle period: no connection open to its port (the UI in a browser
  polls it, a run talks to it) and no write to its database.

It forwards SIGTERM (``swarm server stop``) to the server and waits for it, so the process a
command records and stops is this one, and the server never outlives it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path
from types import FrameType

POLL_S = 5.0
STOP_GRACE_S = 15.0
# /proc/net/tcp state of an open connection.
ESTABLISHED = "01"


def open_connections(port: int) -> int:
    """Connections to ``port`` on this machine now (Linux ``/proc/net/tcp*``; 0 elsewhere)."""
    found = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text(encoding="ascii").splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 4 or fields[3] != ESTABLISHED:
                continue
            _, _, local_port = fields[1].rpartition(":")
            if int(local_port, 16) == port:
                found += 1
    return found


def database_stamp(home: Path) -> tuple[float, ...]:
    """When the server's SQLite database and its journal last changed."""
    stamps = []
    for name in ("prefect.db", "prefect.db-wal"):
        try:
            stamps.append((home / name).stat().st_mtime)
        except OSError:
            stamps.append(0.0)
    return tuple(stamps)


def folder_identity(home: Path) -> tuple[int, int] | None:
    try:
        found = home.stat()
    except OSError:
        return None
    return found.st_dev, found.st_ino


class Keeper:
    """Watches one server child; :meth:`why_stop` says when and why it should end."""

    def __init__(self, home: Path, port: int, idle_s: float) -> None:
        self.home = home
        self.port = port
        self.idle_s = idle_s
        self.folder = folder_identity(home)
        self.stamp = database_stamp(home)
        self.last_used = time.monotonic()

    def why_stop(self) -> str | None:
        if self.folder is None or folder_identity(self.home) != self.folder:
            return f"its folder {self.home} is gone"
        stamp = database_stamp(self.home)
        if open_connections(self.port) or stamp != self.stamp:
            self.stamp = stamp
            self.last_used = time.monotonic()
            return None
        idle = time.monotonic() - self.last_used
        if idle >= self.idle_s:
            return f"unused for {idle:.0f} s"
        return None


def _stop(child: subprocess.Popen[bytes]) -> None:
    """End the server and whatever it started (they share this process group)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with suppress(ProcessLookupError, PermissionError):
        if os.getpgid(0) == os.getpid():  # our own group, as the server's launcher made it
            os.killpg(os.getpid(), signal.SIGTERM)
        else:
            child.terminate()
    try:
        child.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait(timeout=STOP_GRACE_S)


def keep(home: Path, port: int, idle_s: float, command: list[str]) -> int:
    """Run ``command`` (the server) until it exits or the keeper stops it; its exit status."""
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL)
    keeper = Keeper(home, port, idle_s)

    def on_term(signum: int, frame: FrameType | None) -> None:
        _stop(child)
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    while child.poll() is None:
        time.sleep(min(POLL_S, idle_s / 2))
        reason = keeper.why_stop()
        if reason is not None:
            # Into the server's log (our stderr), so a person sees why it is gone.
            print(f"swarm: stopping the Prefect server on port {port}: {reason}", flush=True)
            _stop(child)
            return 0
    return child.returncode or 0


def main(argv: list[str]) -> int:
    """``python -m flows.local.server_keeper HOME PORT IDLE_S -- COMMAND...``"""
    split = argv.index("--")
    home, port, idle_s = argv[:split]
    return keep(Path(home), int(port), float(idle_s), argv[split + 1 :])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
