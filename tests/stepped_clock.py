"""Virtual time for tests where a throttle talks to a sandbox over real HTTP.

A clock compressed against the wall clock (an hour in four real seconds) turns machine load into
time: on a busy machine a few milliseconds of scheduling delay are minutes of GitHub time, and a
test that asserts the throttle *uses* its budget measures the CPU instead. Here time stands still
while anything is in flight or runnable and jumps to the earliest sleeper's deadline once all is
quiet, so every figure a test asserts depends on the throttle's decisions alone, however slow the
machine is. The sandbox (its own thread) and the throttle read the same time: pass a
``SandboxClock`` with speed 0, which moves only by ``advance``.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from sandbox.github.clock import SandboxClock

# Passes through the event loop's ready queue that must all find nothing in flight before time
# moves: a task resumed by a finished request runs (and queues its next request) within these.
_QUIET_PASSES = 5
_TICK_REAL_S = 0.001


class SteppedClock:
    """``now``/``sleep`` for a throttle (its ``Clock``); time moves only in :meth:`driving`."""

    def __init__(self, sandbox: SandboxClock) -> None:
        if sandbox.speed != 0:
            raise ValueError("SteppedClock needs a SandboxClock with speed 0 (it moves the time)")
        self._sandbox = sandbox
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self.steps = 0

    def now(self) -> float:
        return self._sandbox.now()

    async def sleep(self, seconds: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        deadline = self.now() + max(0.0, seconds)
        heapq.heappush(self._sleepers, (deadline, next(self._order), future))
        await future  # a cancelled sleeper's future is cancelled too; the driver skips it

    @asynccontextmanager
    async def driving(self, busy: Callable[[], bool]) -> AsyncIterator[None]:
        """Move time while the body runs; ``busy()`` is true while a request is in flight."""
        driver = asyncio.ensure_future(self._drive(busy))
        try:
            yield
        finally:
            driver.cancel()
            await asyncio.gather(driver, return_exceptions=True)

    async def _drive(self, busy: Callable[[], bool]) -> None:
        while True:
            await asyncio.sleep(_TICK_REAL_S)
            if await self._quiet(busy):
                self._wake_next()

    async def _quiet(self, busy: Callable[[], bool]) -> bool:
        for _ in range(_QUIET_PASSES):
            if busy():
                return False
            await asyncio.sleep(0)
        return not busy()

    def _wake_next(self) -> None:
        while self._sleepers and self._sleepers[0][2].done():
            heapq.heappop(self._sleepers)
        if not self._sleepers:
            return
        deadline = self._sleepers[0][0]
        now = self.now()
        if deadline > now:
            self._sandbox.advance(deadline - now)
            self.steps += 1
        while self._sleepers and self._sleepers[0][0] <= deadline:
            future = heapq.heappop(self._sleepers)[2]
            if not future.done():
                future.set_result(None)
