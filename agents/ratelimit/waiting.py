"""How the engine waits: reach the budget state (off the loop when it is in the store), and run
the one pump per throttle that grants waiting requests in turn."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from agents.ratelimit.backend import S, StateBackend
from agents.ratelimit.clock import Clock

T = TypeVar("T")
# A floor on the sleep keeps a wait that is due "now" from spinning without time passing.
MIN_SLEEP = 1e-4


async def transact(backend: StateBackend[S], key: str, step: Callable[[S], T]) -> T:
    """Run ``step`` on ``key``'s state; off the event loop when the backend does I/O."""
    if backend.blocking:
        return await asyncio.to_thread(backend.transact, key, step)
    return backend.transact(key, step)


async def wake_or_due(clock: Clock, wake: asyncio.Event, due: float | None) -> None:
    """Wait until ``wake`` is set (a release, a new waiter) or, if given, the clock reaches
    ``due`` (a budget refills, a pause ends), whichever comes first."""
    if wake.is_set():
        return
    waker = asyncio.ensure_future(wake.wait())
    if due is None:
        await waker
        return
    sleeper = asyncio.ensure_future(clock.sleep(max(due - clock.now(), MIN_SLEEP)))
    _done, pending = await asyncio.wait({waker, sleeper}, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()


class Pump:
    """The one task of a throttle that grants waiting requests in turn: woken by a new waiter or a
    release, else asleep until the next grant is due. A failing grant (a broken backend) fails
    every waiter instead of leaving them waiting forever."""

    def __init__(
        self,
        clock: Clock,
        *,
        waiting: Callable[[], bool],
        grant: Callable[[], Awaitable[float | None]],
        fail_all: Callable[[Exception], None],
    ) -> None:
        self._clock = clock
        self._waiting = waiting
        self._grant = grant
        self._fail_all = fail_all
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def kick(self) -> None:
        """Something changed (a waiter arrived, a permit came back): look again."""
        self._wake.set()
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        try:
            while self._waiting():
                self._wake.clear()
                due = await self._grant()
                if not self._waiting():
                    break
                await wake_or_due(self._clock, self._wake, due)
        except Exception as exc:
            self._fail_all(exc)
