"""The engine's turn-taking when the budget state is slow to reach (the store's rows): a caller that
gives up while its turn is being decided leaves nothing behind, and the next caller goes."""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import TypeVar

import pytest

from agents.github import Answer, IdentityThrottle, ThrottleLimits, classify_rest
from agents.ratelimit import InMemoryBackend
from agents.ratelimit.github.buckets import IdentityState
from tests.github.helpers import BOT, ManualClock

pytestmark = pytest.mark.anyio

T = TypeVar("T")
READ = classify_rest("GET", "/repos/o/r/pulls/1")


class GatedBackend(InMemoryBackend[IdentityState]):
    """State in memory, reached from a worker thread like the store's rows. While ``gated``,
    each step reports that it began (``began``) and waits in its thread for one
    ``gate.release()``, so a test can act while a step is under way."""

    blocking = True

    def __init__(self) -> None:
        super().__init__(IdentityState)
        self.gated = False
        self.gate = threading.Semaphore(0)
        self.began: queue.Queue[None] = queue.Queue()

    def transact(self, key: str, step: Callable[[IdentityState], T]) -> T:
        if self.gated:
            self.began.put(None)
            self.gate.acquire(timeout=30)
        return super().transact(key, step)


async def test_a_caller_cancelled_while_its_turn_is_decided_leaves_no_reservation_or_stall() -> (
    None
):
    backend = GatedBackend()
    limits = ThrottleLimits(max_concurrency=1)
    throttle = IdentityThrottle(BOT, limits=limits, clock=ManualClock(), backend=backend)
    held = await throttle.acquire("w", READ)
    gone = asyncio.ensure_future(throttle.acquire("gone", READ))
    late = asyncio.ensure_future(throttle.acquire("late", READ))
    while throttle.waiting < 2:
        await asyncio.sleep(0.01)
    backend.gated = True
    settling = asyncio.ensure_future(throttle.settle(held, Answer(200, {})))
    await asyncio.to_thread(backend.began.get, timeout=30)  # the release
    backend.gate.release()
    await asyncio.to_thread(backend.began.get, timeout=30)  # "gone"'s turn, being decided
    gone.cancel()
    await asyncio.sleep(0.01)
    backend.gated = False
    backend.gate.release()
    await settling
    permit = await asyncio.wait_for(late, 30)
    assert permit.worker_id == "late"
    assert gone.cancelled()
    snapshot = await throttle.snapshot()
    assert (snapshot.waiting, snapshot.in_flight) == (0, 1)
