"""Where an identity's budget state lives: one process (default) or a shared database."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol, TypeVar

from agents.github.buckets import IdentityState

T = TypeVar("T")


class BudgetBackend(Protocol):
    """Runs a step on an identity's state atomically with respect to every other user of it.

    ``shared``: other processes may change the state, so waiters must re-check it periodically
    instead of waiting only for local releases. ``blocking``: ``transact`` does I/O and the
    async throttle runs it in a worker thread.
    """

    shared: bool
    blocking: bool

    def transact(self, identity: str, step: Callable[[IdentityState], T]) -> T: ...

    def close(self) -> None: ...


class InMemoryBackend:
    """State in this process only; the default when one process owns an identity.

    Pass ``shared=True`` when several throttles (one per event loop or thread) use this one
    backend, so their waiters also notice each other's releases.
    """

    blocking = False

    def __init__(self, *, shared: bool = False) -> None:
        self.shared = shared
        self._states: dict[str, IdentityState] = {}
        self._lock = threading.Lock()

    def transact(self, identity: str, step: Callable[[IdentityState], T]) -> T:
        with self._lock:
            state = self._states.get(identity)
            if state is None:
                state = self._states[identity] = IdentityState()
            return step(state)

    def close(self) -> None:
        return None
