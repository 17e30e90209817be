"""The rate-limit engine: one budget's throttle, granting permits in turn as its policy allows.

A caller asks for a permit (:meth:`Throttle.acquire`), sends, and hands the permit back with the
answer (:meth:`Throttle.settle`) or without one (:meth:`Throttle.abandon`). Between the two the
request's cost stays reserved in the budget state, so every other caller, in this process or in
another sharing the backend, sees it in flight. What a request costs, when it may go and what an
answer changes is the policy's (:class:`agents.ratelimit.policy.Policy`); taking turns, waiting,
pauses too long to sleep through and requests that can never fit are the engine's, the same for
every provider.

Use one throttle per budget per event loop; its waiting queue lives on that loop. Several loops,
threads or processes share a budget by sharing the backend, not the throttle.
"""

from __future__ import annotations

import asyncio
import itertools
import uuid
from collections.abc import Callable, Coroutine
from typing import Generic, TypeVar

from agents.ratelimit.backend import InMemoryBackend, S, StateBackend
from agents.ratelimit.clock import Clock, SystemClock
from agents.ratelimit.decision import Decision
from agents.ratelimit.pause import ImpossibleRequest, Pause, Paused
from agents.ratelimit.permit import Permit
from agents.ratelimit.policy import Policy
from agents.ratelimit.turns import Turns, Waiter
from agents.ratelimit.waiting import Pump, transact

R = TypeVar("R")
A = TypeVar("A")
T = TypeVar("T")


class Throttle(Generic[R, S, A]):
    """The budget ``name``; ``subject`` is how a pause names who is out (``identity x[bot]``)."""

    def __init__(
        self,
        name: str,
        policy: Policy[R, S, A],
        *,
        subject: str | None = None,
        clock: Clock | None = None,
        backend: StateBackend[S] | None = None,
    ) -> None:
        if not name:
            raise ValueError("a throttle needs the name of its budget")
        self.name = name
        self.subject = subject or name
        self.policy = policy
        self.clock: Clock = clock or SystemClock()
        self.backend: StateBackend[S] = backend or InMemoryBackend(policy.state_type)
        self._ids = itertools.count()
        self._prefix = uuid.uuid4().hex[:12]
        self._turns: Turns[R] = Turns()
        self._pump = Pump(
            self.clock,
            waiting=lambda: self._turns.waiting > 0,
            grant=self._grant_in_turn,
            fail_all=self._fail_all,
        )
        self._background: set[asyncio.Future[None]] = set()

    @property
    def waiting(self) -> int:
        return self._turns.waiting

    async def transact(self, step: Callable[[S], T]) -> T:
        """Run ``step`` on the budget state (a snapshot, a reading from elsewhere)."""
        return await transact(self.backend, self.name, step)

    # -- acquiring ----------------------------------------------------------------------------
    async def acquire(self, worker_id: str, request: R) -> Permit[R]:
        """Wait for leave to send ``request``; raises :class:`Paused` for a pause longer than the
        policy's inline wait and :class:`ImpossibleRequest` for a request that can never fit."""
        rid = f"{self._prefix}-{next(self._ids)}"
        requested = self.clock.now()
        lane = self.policy.lane(request)
        if not self._turns.busy(lane):
            decision, now = await self._decide(request, rid, worker_id)
            if decision.granted:
                return Permit(rid, worker_id, request, requested, now)
            refusal = self._refusal(decision, now)
            if refusal is not None:
                raise refusal
        future: asyncio.Future[Permit[R]] = asyncio.get_running_loop().create_future()
        waiter = Waiter(lane, worker_id, request, rid, requested, future)
        self._turns.join(waiter)
        self._pump.kick()
        try:
            return await waiter.future
        except asyncio.CancelledError:
            self._turns.leave(waiter, had_turn=False)
            future = waiter.future
            if future.done() and not future.cancelled() and future.exception() is None:
                # Granted just as the caller gave up: hand the reservation back.
                self._in_background(self.abandon(future.result()))
            raise

    async def _decide(self, request: R, rid: str, worker_id: str) -> tuple[Decision, float]:
        now = self.clock.now()
        policy = self.policy
        decision = await self.transact(lambda s: policy.decide(s, request, rid, worker_id, now))
        return decision, now

    def _refusal(self, decision: Decision, now: float) -> Exception | None:
        """What the caller is told instead of waiting, if anything."""
        if decision.impossible:
            return ImpossibleRequest(decision.reason)
        until = decision.wait_until
        if (
            decision.paused
            and until is not None
            and until - now > self.policy.limits.max_inline_wait
        ):
            return Paused(self.subject, until, decision.reason, now=now)
        return None

    async def _grant_in_turn(self) -> float | None:
        """Grant lane heads in turn; return when to look again (None: on the next release)."""
        due: float | None = None
        for lane in self._turns.lanes():
            while (waiter := self._turns.head(lane)) is not None:
                if waiter.future.done():  # its caller gave up
                    self._turns.leave(waiter, had_turn=True)
                    continue
                decision, now = await self._decide(
                    waiter.request, waiter.reservation_id, waiter.worker_id
                )
                if waiter.future.done():  # it gave up while the state was being read
                    self._turns.leave(waiter, had_turn=True)
                    if decision.granted:
                        await self.abandon(self._permit(waiter, now))
                    continue
                if decision.granted:
                    self._turns.leave(waiter, had_turn=True)
                    waiter.future.set_result(self._permit(waiter, now))
                    continue
                refusal = self._refusal(decision, now)
                if refusal is not None:
                    self._turns.leave(waiter, had_turn=True)
                    waiter.future.set_exception(refusal)
                    continue
                if decision.wait_until is not None:
                    due = decision.wait_until if due is None else min(due, decision.wait_until)
                elif self.backend.shared:
                    poll = now + self.policy.limits.shared_poll_interval
                    due = poll if due is None else min(due, poll)
                break
        return due

    @staticmethod
    def _permit(waiter: Waiter[R], now: float) -> Permit[R]:
        return Permit(
            waiter.reservation_id, waiter.worker_id, waiter.request, waiter.requested_at, now
        )

    def _fail_all(self, exc: Exception) -> None:
        for waiter in self._turns.drain():
            if not waiter.future.done():
                waiter.future.set_exception(exc)

    def _in_background(self, work: Coroutine[object, object, None]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- settling -----------------------------------------------------------------------------
    async def settle(self, permit: Permit[R], answer: A | None) -> Pause | None:
        """Hand the permit back with the provider's answer; returns the pause it caused."""
        now, policy = self.clock.now(), self.policy
        pause = await self.transact(lambda s: policy.settle(s, permit, now, answer))
        if self._turns.waiting:
            self._pump.kick()
        return pause

    async def abandon(self, permit: Permit[R]) -> None:
        """Hand back a permit whose request got no answer (timeout, connection error)."""
        await self.settle(permit, None)

    def reports(self, pause: Pause) -> bool:
        """A pause longer than the inline wait is reported to the caller, not slept."""
        return pause.until - self.clock.now() > self.policy.limits.max_inline_wait
