"""What a provider's rate-limit policy tells the engine: what blocks together, what a request may
do now, and what an answer changes.

Both steps run on the budget state under the backend's lock (a mutex in memory, a row lock in the
store), so they stay short and do no I/O. The engine never reads the state itself: everything the
provider's numbers mean stays in the policy (``agents.ratelimit.github``,
``agents.ratelimit.anthropic``).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Protocol, TypeVar

from agents.ratelimit.backend import SharedState
from agents.ratelimit.decision import Decision
from agents.ratelimit.pause import Pause
from agents.ratelimit.permit import Permit

R = TypeVar("R")
S = TypeVar("S", bound=SharedState)
A_contra = TypeVar("A_contra", contravariant=True)


class Waits(Protocol):
    """The two numbers of a policy's limits the engine itself keeps to."""

    @property
    def max_inline_wait(self) -> float:
        """Longest pause a caller sleeps through; a longer one is reported as :class:`Paused`."""
        ...

    @property
    def shared_poll_interval(self) -> float:
        """How often a waiter looks again when another process may change the state."""
        ...


class Policy(Protocol[R, S, A_contra]):
    """``R``: one request as the policy prices it; ``S``: the budget's state; ``A``: an answer."""

    @property
    def state_type(self) -> type[S]: ...

    @property
    def limits(self) -> Waits: ...

    def lane(self, request: R) -> Hashable:
        """Requests of one lane take turns; those of different lanes do not block each other."""
        ...

    def decide(
        self, state: S, request: R, reservation_id: str, worker_id: str, now: float
    ) -> Decision:
        """Reserve the request's cost under ``reservation_id`` if every limit allows it now;
        change nothing otherwise."""
        ...

    def settle(
        self, state: S, permit: Permit[R], now: float, answer: A_contra | None
    ) -> Pause | None:
        """Release the permit's reservation and fold in the provider's answer (None: there was
        none: a timeout, a connection error, a caller that gave up); returns the pause it
        caused."""
        ...
