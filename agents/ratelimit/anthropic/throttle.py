"""One API key's throttle: reserve before each call, settle after, take turns, honour pauses.

Use one throttle per key and model per event loop; several loops or processes share a key by
sharing the backend (the store), not the throttle. Waiting calls form one queue in arrival
order: the head waits for its budget and nobody overtakes it, so a large call is never starved
by small ones (each worker has at most one call in flight, so this is also fair across workers).
"""

from __future__ import annotations

import asyncio
import itertools
import random
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from agents.llm.errors import LLMPaused, LLMRequestError
from agents.ratelimit import (
    Clock,
    InMemoryBackend,
    Pump,
    StateBackend,
    SystemClock,
    transact,
)
from agents.ratelimit.anthropic.limits import LLMLimits
from agents.ratelimit.anthropic.meters import Decision, KeyState, Pause, decide, settle, snapshot
from agents.ratelimit.anthropic.readings import read_headers

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class KeyPermit:
    """Leave to send one call; hand it back with :meth:`KeyThrottle.settle`."""

    rid: str
    worker_id: str
    requested_at: float
    granted_at: float

    @property
    def waited(self) -> float:
        return self.granted_at - self.requested_at


@dataclass(slots=True)
class _Waiter:
    rid: str
    worker_id: str
    cost: Mapping[str, int]
    requested_at: float
    future: asyncio.Future[KeyPermit]


class KeyThrottle:
    def __init__(
        self,
        key: str,
        *,
        limits: LLMLimits | None = None,
        clock: Clock | None = None,
        backend: StateBackend[KeyState] | None = None,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        if not key:
            raise ValueError("KeyThrottle needs a key name (a fingerprint, never the key)")
        self.key = key
        self.limits = limits or LLMLimits()
        self.clock: Clock = clock or SystemClock()
        self.backend: StateBackend[KeyState] = backend or InMemoryBackend(KeyState)
        self._jitter = jitter
        self._ids = itertools.count()
        self._prefix = uuid.uuid4().hex[:12]
        self._queue: deque[_Waiter] = deque()
        self._pump = Pump(
            self.clock,
            waiting=lambda: bool(self._queue),
            grant=self._grant_what_can_go,
            fail_all=self._fail_all,
        )

    async def _transact(self, step: Callable[[KeyState], T]) -> T:
        return await transact(self.backend, self.key, step)

    async def acquire(self, worker_id: str, cost: Mapping[str, int]) -> KeyPermit:
        """Wait until a call costing ``cost`` may go; raises :class:`LLMPaused` for a long
        pause and :class:`LLMRequestError` for a call that can never fit the key's budget."""
        rid = f"{self._prefix}-{next(self._ids)}"
        requested = self.clock.now()
        future: asyncio.Future[KeyPermit] = asyncio.get_running_loop().create_future()
        self._queue.append(_Waiter(rid, worker_id, dict(cost), requested, future))
        self._pump.kick()
        try:
            return await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled() and future.exception() is None:
                await asyncio.shield(self.abandon(future.result()))
            raise

    def _fail_all(self, exc: Exception) -> None:
        while self._queue:
            waiter = self._queue.popleft()
            if not waiter.future.done():
                waiter.future.set_exception(exc)

    async def _grant_what_can_go(self) -> float | None:
        while self._queue:
            waiter = self._queue[0]
            if waiter.future.done():  # its caller gave up
                self._queue.popleft()
                continue
            decision, now = await self._decide(waiter)
            if decision.granted:
                self._queue.popleft()
                permit = KeyPermit(waiter.rid, waiter.worker_id, waiter.requested_at, now)
                if waiter.future.done():
                    await self.abandon(permit)
                else:
                    waiter.future.set_result(permit)
                continue
            error = self._refusal(decision, now)
            if error is not None:
                self._queue.popleft()
                if not waiter.future.done():
                    waiter.future.set_exception(error)
                continue
            if decision.wait_until is not None:
                return decision.wait_until
            return now + self.limits.shared_poll_interval if self.backend.shared else None
        return None

    async def _decide(self, waiter: _Waiter) -> tuple[Decision, float]:
        now = self.clock.now()
        lim = self.limits
        decision = await self._transact(
            lambda s: decide(s, waiter.rid, waiter.worker_id, waiter.cost, now, lim)
        )
        return decision, now

    def _refusal(self, decision: Decision, now: float) -> Exception | None:
        if decision.impossible:
            return LLMRequestError(decision.reason)
        until = decision.wait_until
        if decision.paused and until is not None and until - now > self.limits.max_inline_wait:
            return LLMPaused(until, decision.reason, now=now)
        return None

    async def settle(
        self,
        permit: KeyPermit,
        status: int | None,
        headers: Mapping[str, str],
        *,
        charged_input: int | None = None,
        charged_output: int | None = None,
    ) -> Pause | None:
        """Hand the permit back with the provider's answer; returns the pause it caused."""
        now = self.clock.now()
        reading = read_headers(headers)
        jitter = self._jitter()
        lim = self.limits
        pause = await self._transact(
            lambda s: settle(
                s, permit.rid, now, status, reading, charged_input, charged_output, lim, jitter
            )
        )
        if self._queue:
            self._pump.kick()
        return pause

    async def abandon(self, permit: KeyPermit) -> None:
        """Hand back a permit whose call never got an answer."""
        await self.settle(permit, None, {})

    def paused_error(self, pause: Pause) -> LLMPaused:
        return LLMPaused(pause.until, pause.reason, now=self.clock.now())

    async def snapshot(self) -> dict[str, Any]:
        now = self.clock.now()
        lim = self.limits
        view = await self._transact(lambda s: snapshot(s, now, lim))
        return {"key": self.key, "waiting": len(self._queue), **view}
