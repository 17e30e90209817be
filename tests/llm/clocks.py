"""A virtual clock for one-caller LLM tests: sleeping on it moves time, not the wall clock."""

from __future__ import annotations

import asyncio


class VirtualClock:
    """Epoch seconds that advance only when a caller sleeps; both the scripted model (called
    as ``clock()``) and the throttle (``now()``/``sleep()``) read it."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.t = start
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.t

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 6))
        self.t += max(0.0, seconds)
        await asyncio.sleep(0)
