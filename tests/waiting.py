"""Waiting for what another process makes true: a socket that appears, a process that ends."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(check: Callable[[], object], what: str, timeout: float = 240.0) -> None:
    """Return once ``check()`` is true; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)
