"""One identity's throttle: waits as needed, paces reads to last until the reset, takes turns.

Use one throttle per identity per event loop; its waiting queue lives on that loop. Several
loops, threads or processes share an identity by sharing the backend, not the throttle.

Waiting requests queue per lane (resource, read or write) and per worker; the lane's turn
rotates across workers so one busy worker cannot starve the others. A lane's head blocks only its
own lane: a mutation waiting out its 1 s spacing does not hold up reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar

from agents.github.errors import IdentityPaused
from agents.ratelimit import InMemoryBackend, Pump, StateBackend, transact
from agents.ratelimit.clock import Clock, SystemClock
from agents.ratelimit.github.buckets import Decision, IdentityState, Pause, decide
from agents.ratelimit.github.limits import ThrottleLimits
from agents.ratelimit.github.readings import Answer, apply_rate_limit_body, observe
from agents.ratelimit.github.requests import RequestSpec
from agents.ratelimit.github.snapshot import IdentitySnapshot, build_snapshot

T = TypeVar("T")
# Where an identity's state lives: in this process (the default), or in the store's rows
# (``RowBackend``) when several processes or machines share the identity.
BudgetBackend: TypeAlias = StateBackend[IdentityState]
LaneKey = tuple[str, bool]


@dataclass(frozen=True, slots=True)
class Permit:
    """Leave to send one request; hand it back with :meth:`IdentityThrottle.complete`."""

    reservation_id: str
    worker_id: str
    spec: RequestSpec
    requested_at: float
    granted_at: float

    @property
    def waited(self) -> float:
        return self.granted_at - self.requested_at


@dataclass(slots=True)
class _Waiter:
    worker_id: str
    spec: RequestSpec
    reservation_id: str
    requested_at: float
    future: asyncio.Future[Permit]


class IdentityThrottle:
    def __init__(
        self,
        identity: str,
        *,
        limits: ThrottleLimits | None = None,
        clock: Clock | None = None,
        backend: BudgetBackend | None = None,
    ) -> None:
        if not identity:
            raise ValueError("IdentityThrottle needs the identity's login")
        self.identity = identity
        self.limits = limits or ThrottleLimits()
        self.clock: Clock = clock or SystemClock()
        self.backend: BudgetBackend = backend or InMemoryBackend(IdentityState)
        self._ids = itertools.count()
        self._prefix = uuid.uuid4().hex[:12]
        self._lanes: dict[LaneKey, OrderedDict[str, deque[_Waiter]]] = {}
        self._waiting = 0
        self._pump = Pump(
            self.clock,
            waiting=lambda: self._waiting > 0,
            grant=self._grant_what_can_go,
            fail_all=self._fail_all,
        )
        self._background: set[asyncio.Future[None]] = set()
        # The loop this throttle's waiters wait on, once one has waited: where ``wake`` reaches.
        self._home: asyncio.AbstractEventLoop | None = None

    # -- state access -------------------------------------------------------------------------
    async def _transact(self, step: Callable[[IdentityState], T]) -> T:
        return await transact(self.backend, self.identity, step)

    async def _decide(self, spec: RequestSpec, rid: str, worker_id: str) -> tuple[Decision, float]:
        lim = self.limits
        now = self.clock.now()
        decision = await self._transact(lambda s: decide(s, spec, rid, worker_id, now, lim))
        return decision, now

    def _too_long(self, decision: Decision, now: float) -> bool:
        return (
            decision.paused
            and decision.wait_until is not None
            and decision.wait_until - now > self.limits.max_inline_wait
        )

    def _paused_error(self, decision: Decision, now: float) -> IdentityPaused:
        assert decision.wait_until is not None
        return IdentityPaused(self.identity, decision.wait_until, decision.reason, now=now)

    # -- acquiring ----------------------------------------------------------------------------
    async def acquire(self, worker_id: str, spec: RequestSpec) -> Permit:
        """Wait until ``spec`` may be sent; raises :class:`IdentityPaused` for a long pause."""
        rid = f"{self._prefix}-{next(self._ids)}"
        requested = self.clock.now()
        lane_key = (spec.resource, spec.is_write)
        lane = self._lanes.get(lane_key)
        if not lane:
            decision, now = await self._decide(spec, rid, worker_id)
            if decision.granted:
                return Permit(rid, worker_id, spec, requested, now)
            if self._too_long(decision, now):
                raise self._paused_error(decision, now)
            lane = self._lanes.setdefault(lane_key, OrderedDict())
        self._home = asyncio.get_running_loop()
        future: asyncio.Future[Permit] = self._home.create_future()
        lane.setdefault(worker_id, deque()).append(_Waiter(worker_id, spec, rid, requested, future))
        self._waiting += 1
        self._pump.kick()
        try:
            return await future
        except asyncio.CancelledError:
            self._forget(lane_key, worker_id, future)
            if future.done() and not future.cancelled() and future.exception() is None:
                # Granted just as the caller gave up: hand the reservation back.
                task = asyncio.ensure_future(self.abandon(future.result()))
                self._background.add(task)
                task.add_done_callback(self._background.discard)
            raise

    def _forget(self, lane_key: LaneKey, worker_id: str, future: asyncio.Future[Permit]) -> None:
        lane = self._lanes.get(lane_key)
        queue = lane.get(worker_id) if lane else None
        if lane is None or queue is None:
            return
        for waiter in queue:
            if waiter.future is future:
                queue.remove(waiter)
                self._waiting -= 1
                break
        if not queue:
            del lane[worker_id]

    def _fail_all(self, exc: Exception) -> None:
        for lane in self._lanes.values():
            for queue in lane.values():
                for waiter in queue:
                    if not waiter.future.done():
                        waiter.future.set_exception(exc)
        self._lanes.clear()
        self._waiting = 0

    async def _grant_what_can_go(self) -> float | None:
        """Grant lane heads in turn; return when to look again (None: on the next release)."""
        due: float | None = None
        for lane_key in list(self._lanes):
            lane = self._lanes[lane_key]
            while lane:
                worker_id, queue = next(iter(lane.items()))
                waiter = queue[0]
                if waiter.future.done():  # cancelled meanwhile
                    self._pop_head(lane, worker_id, queue)
                    continue
                decision, now = await self._decide(waiter.spec, waiter.reservation_id, worker_id)
                if decision.granted:
                    self._pop_head(lane, worker_id, queue)
                    permit = Permit(
                        waiter.reservation_id, worker_id, waiter.spec, waiter.requested_at, now
                    )
                    if waiter.future.done():
                        await self.abandon(permit)
                    else:
                        waiter.future.set_result(permit)
                    continue
                if self._too_long(decision, now):
                    self._pop_head(lane, worker_id, queue)
                    waiter.future.set_exception(self._paused_error(decision, now))
                    continue
                if decision.wait_until is not None:
                    due = decision.wait_until if due is None else min(due, decision.wait_until)
                elif self.backend.shared:
                    poll = now + self.limits.shared_poll_interval
                    due = poll if due is None else min(due, poll)
                break
            if not lane:
                del self._lanes[lane_key]
        return due

    def _pop_head(
        self, lane: OrderedDict[str, deque[_Waiter]], worker_id: str, queue: deque[_Waiter]
    ) -> None:
        queue.popleft()
        self._waiting -= 1
        if queue:
            lane.move_to_end(worker_id)  # the next turn goes to another worker
        else:
            del lane[worker_id]

    # -- completing ---------------------------------------------------------------------------
    async def complete(
        self,
        permit: Permit,
        status: int | None,
        headers: Mapping[str, str],
        *,
        message: str | None = None,
        graphql_rate_limited: bool = False,
    ) -> Pause | None:
        """Hand the permit back with GitHub's answer; returns the pause it caused, if any."""
        answer = Answer(status, headers, message, graphql_rate_limited)
        lim, now = self.limits, self.clock.now()
        pause = await self._transact(
            lambda s: observe(s, permit.reservation_id, permit.spec, now, answer, lim)
        )
        if self._waiting:
            self._pump.kick()
        return pause

    async def abandon(self, permit: Permit) -> None:
        """Hand back a permit whose request got no answer (timeout, connection error)."""
        await self.complete(permit, None, {})

    def wake(self) -> None:
        """Thread-safe: the state changed outside this loop (a request from another thread ended),
        so waiters for an in-flight request's end look again."""
        home = self._home
        if home is not None and not home.is_closed():
            # Closed in between: nobody is left waiting there.
            with contextlib.suppress(RuntimeError):
                home.call_soon_threadsafe(self._look_again)

    def _look_again(self) -> None:
        if self._waiting:
            self._pump.kick()

    def pause_error(self, pause: Pause) -> IdentityPaused:
        return IdentityPaused(self.identity, pause.until, pause.reason, now=self.clock.now())

    def should_report(self, pause: Pause) -> bool:
        """A pause longer than ``max_inline_wait`` is reported to the caller, not slept."""
        return pause.until - self.clock.now() > self.limits.max_inline_wait

    async def absorb_rate_limit_body(self, body: Mapping[str, Any]) -> None:
        """Fold in a ``GET /rate_limit`` body: every resource's figures at once."""
        await self._transact(lambda s: apply_rate_limit_body(s, body))

    async def snapshot(self) -> IdentitySnapshot:
        now = self.clock.now()
        waiting = self._waiting
        return await self._transact(lambda s: build_snapshot(self.identity, s, now, waiting))
