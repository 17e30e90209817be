"""A command run in a real pseudo-terminal of a given width, as a person's terminal runs it: what
it printed, with the terminal's escape codes taken out."""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import termios
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

# CSI sequences (colours, cursor moves) and OSC sequences (titles, hyperlinks).
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def run_in_terminal(
    args: Sequence[str],
    *,
    columns: int,
    env: Mapping[str, str],
    cwd: Path,
    timeout_s: float = 240,
) -> tuple[int, str]:
    """Run ``args`` with stdin, stdout and stderr on a pty ``columns`` wide (COLUMNS unset, so
    the program must ask the terminal): its exit status and its output as plain lines."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    clean = {k: v for k, v in env.items() if k not in ("COLUMNS", "LINES")}
    process = subprocess.Popen(
        list(args),
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={**clean, "TERM": "xterm-256color"},
        cwd=cwd,
        start_new_session=True,
    )
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the last holder of the terminal closed it
                break
            if not data:
                break
            chunks.append(data)
        code = process.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
    text = _ESCAPES.sub("", b"".join(chunks).decode("utf-8", "replace"))
    return code, text.replace("\r\n", "\n").replace("\r", "\n")
