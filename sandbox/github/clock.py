"""A clock for the sandbox that can run faster than real time or be moved by hand.

Rate-limit windows and token expiry are measured on this clock, so a test or a
benchmark can live through an hour of GitHub time in a few real seconds.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime


class SandboxClock:
    """Epoch seconds that advance at ``speed`` times real time, plus manual jumps."""

    def __init__(self, start: float | None = None, speed: float = 1.0) -> None:
        if speed < 0:
            raise ValueError(f"SandboxClock speed must be >= 0, got {speed}")
        self._lock = threading.Lock()
        self._base = time.time() if start is None else start
        self._real_base = time.monotonic()
        self._speed = speed

    @property
    def speed(self) -> float:
        return self._speed

    def now(self) -> float:
        with self._lock:
            return self._base + (time.monotonic() - self._real_base) * self._speed

    def now_dt(self) -> datetime:
        return datetime.fromtimestamp(self.now(), tz=UTC)

    def advance(self, seconds: float) -> None:
        """Jump forward (a test moving past a rate-limit reset or a token expiry)."""
        with self._lock:
            self._base += seconds

    def set_speed(self, speed: float) -> None:
        """Change the speed without a jump: time so far is kept."""
        if speed < 0:
            raise ValueError(f"SandboxClock speed must be >= 0, got {speed}")
        with self._lock:
            real = time.monotonic()
            self._base += (real - self._real_base) * self._speed
            self._real_base = real
            self._speed = speed

    @classmethod
    def compressed(cls, sandbox_seconds: float, real_seconds: float) -> SandboxClock:
        """A clock on which ``sandbox_seconds`` pass in ``real_seconds`` (e.g. 3600 in 10)."""
        return cls(speed=sandbox_seconds / real_seconds)


def iso(ts: float) -> str:
    """GitHub's timestamp format; githubkit parses token expiry with exactly this layout."""
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
