"""Whose turn it is: waiting requests queue per lane and, within a lane, per worker.

A lane is what the policy says blocks together (GitHub: a resource's reads, or its writes; the
model key: every call). A lane's head waits for its budget and nobody in that lane overtakes it,
so a large request is never starved by small ones; other lanes go on meanwhile. The turn rotates
across the workers of a lane, so one busy worker cannot starve the others: with one request per
worker this is arrival order.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from agents.ratelimit.permit import Permit

R = TypeVar("R")


@dataclass(slots=True, eq=False)
class Waiter(Generic[R]):
    lane: Hashable
    worker_id: str
    request: R
    reservation_id: str
    requested_at: float
    future: asyncio.Future[Permit[R]]


class Turns(Generic[R]):
    def __init__(self) -> None:
        self._lanes: dict[Hashable, OrderedDict[str, deque[Waiter[R]]]] = {}
        self.waiting = 0

    def busy(self, lane: Hashable) -> bool:
        """Someone waits in ``lane``: a newcomer queues behind them instead of asking first."""
        return bool(self._lanes.get(lane))

    def join(self, waiter: Waiter[R]) -> None:
        lane = self._lanes.setdefault(waiter.lane, OrderedDict())
        lane.setdefault(waiter.worker_id, deque()).append(waiter)
        self.waiting += 1

    def lanes(self) -> list[Hashable]:
        return list(self._lanes)

    def head(self, lane_key: Hashable) -> Waiter[R] | None:
        """Whose turn it is in the lane: the first waiting worker's oldest request."""
        lane = self._lanes.get(lane_key)
        if not lane:
            self._lanes.pop(lane_key, None)
            return None
        return next(iter(lane.values()))[0]

    def leave(self, waiter: Waiter[R], *, had_turn: bool) -> None:
        """``waiter`` waits no more (granted, refused or given up); nothing if already gone.

        ``had_turn``: it left from the head of its lane, so the next turn goes to another worker.
        """
        lane = self._lanes.get(waiter.lane)
        queue = lane.get(waiter.worker_id) if lane else None
        if lane is None or queue is None or waiter not in queue:
            return
        queue.remove(waiter)
        self.waiting -= 1
        if not queue:
            del lane[waiter.worker_id]
        elif had_turn:
            lane.move_to_end(waiter.worker_id)
        if not lane:
            del self._lanes[waiter.lane]

    def drain(self) -> Iterator[Waiter[R]]:
        """Everyone, emptied out (a broken backend fails every waiter)."""
        lanes, self._lanes, self.waiting = self._lanes, {}, 0
        for lane in lanes.values():
            for queue in lane.values():
                yield from queue
