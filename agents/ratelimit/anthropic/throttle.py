"""One API key's throttle: the model key's policy on the engine.

Every call of a key and model waits in one lane: its head waits for its budget and nobody
overtakes it, so a large call is never starved by small ones, and the turn rotates across workers
(each has at most one call in flight, so this is arrival order). What a call may do now is
:func:`agents.ratelimit.anthropic.meters.decide`; what the answer changes,
:func:`agents.ratelimit.anthropic.meters.settle`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

from agents.ratelimit.anthropic.limits import LLMLimits
from agents.ratelimit.anthropic.meters import (
    NOT_CHARGED,
    Charged,
    KeyState,
    KeyView,
    decide,
    settle,
    snapshot,
)
from agents.ratelimit.anthropic.readings import NO_READING, read_headers
from agents.ratelimit.backend import StateBackend
from agents.ratelimit.clock import Clock
from agents.ratelimit.decision import Decision
from agents.ratelimit.pause import Pause
from agents.ratelimit.permit import Permit
from agents.ratelimit.throttle import Throttle

# A call's cost per meter: ``requests``, ``input-tokens``, ``output-tokens``.
Cost: TypeAlias = Mapping[str, int]
KEY_SUBJECT = "model calls"


class KeySnapshot(KeyView):
    """:class:`~agents.ratelimit.anthropic.meters.KeyView`, with the key's name and how many
    calls wait on this throttle's loop."""

    key: str
    waiting: int


@dataclass(frozen=True, slots=True)
class KeyAnswer:
    """What the provider said about one call: its status and headers, and what it was charged
    once answered (None: not known, nothing is given back)."""

    status: int | None
    headers: Mapping[str, str]
    charged_input: int | None = None
    charged_output: int | None = None


class KeyPolicy:
    """The provider's per-minute meters of one key and model class, as the engine asks for them."""

    state_type = KeyState

    def __init__(self, limits: LLMLimits, jitter: Callable[[], float] = random.random) -> None:
        self.limits = limits
        self._jitter = jitter

    def lane(self, request: Cost) -> Hashable:
        return KEY_SUBJECT

    def decide(
        self, state: KeyState, request: Cost, reservation_id: str, worker_id: str, now: float
    ) -> Decision:
        return decide(state, reservation_id, worker_id, request, now, self.limits)

    def settle(
        self, state: KeyState, permit: Permit[Cost], now: float, answer: KeyAnswer | None
    ) -> Pause | None:
        rid, lim, jitter = permit.reservation_id, self.limits, self._jitter()
        if answer is None:
            return settle(state, rid, now, None, NO_READING, NOT_CHARGED, lim, jitter)
        reading = read_headers(answer.headers)
        charged = Charged(answer.charged_input, answer.charged_output)
        return settle(state, rid, now, answer.status, reading, charged, lim, jitter)


@dataclass(frozen=True)
class KeyMetering:
    """What every throttle of one key is built with: the provider's limits as swarm reads them,
    the clock it waits on (None: the system's), and where its state lives (None: in this
    process)."""

    limits: LLMLimits = field(default_factory=LLMLimits)
    clock: Clock | None = None
    backend: StateBackend[KeyState] | None = None


class KeyThrottle(Throttle[Cost, KeyState, KeyAnswer]):
    """The budget ``key`` names (a fingerprint and model class, never the key itself)."""

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
        policy = KeyPolicy(self.limits, jitter)
        super().__init__(key, policy, subject=KEY_SUBJECT, clock=clock, backend=backend)

    async def snapshot(self) -> KeySnapshot:
        now, lim = self.clock.now(), self.limits
        view = await self.transact(lambda s: snapshot(s, now, lim))
        return {"key": self.key, "waiting": self.waiting, **view}
