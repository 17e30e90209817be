"""Time for the throttles: an injectable clock so tests and the sandbox can compress an hour."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Protocol


class Clock(Protocol):
    """Epoch seconds on the provider's time line (GitHub's ``x-ratelimit-reset``, Anthropic's
    ``anthropic-ratelimit-*-reset``), and a sleep on it."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """Wall-clock time: what production uses."""

    def now(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


class ScaledClock:
    """A clock read from ``now`` that runs ``speed`` times faster than real time.

    Wraps a sandbox's compressed clock (``ScaledClock(sandbox_clock.now, sandbox_clock.speed)``):
    sleeping N clock seconds takes N / speed real seconds.
    """

    def __init__(self, now: Callable[[], float], speed: float) -> None:
        if speed <= 0:
            raise ValueError(f"ScaledClock speed must be > 0, got {speed}")
        self._now = now
        self.speed = speed

    def now(self) -> float:
        return self._now()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds) / self.speed)
