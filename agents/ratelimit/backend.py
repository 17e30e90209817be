"""Where budget state lives: one process (in memory) or a shared database (the store).

A state is any object that round-trips through a JSON dict (``to_dict`` / ``from_dict``) and has
an empty form (its class called without arguments). A backend runs one step on the state named
``key`` atomically with respect to every other user of that key, and keeps the result.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, Generic, Protocol, Self, TypeVar


class SharedState(Protocol):
    def __init__(self) -> None: ...

    def to_dict(self) -> dict[str, Any]: ...

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self: ...


S = TypeVar("S", bound=SharedState)
S_co = TypeVar("S_co", bound=SharedState, covariant=True)
T = TypeVar("T")


class StateBackend(Protocol[S_co]):
    """Runs a step on a named state atomically with respect to every other user of it.

    ``shared``: other processes may change the state, so waiters must re-check it periodically
    instead of waiting only for local releases. ``blocking``: ``transact`` does I/O and an async
    throttle runs it in a worker thread.
    """

    shared: bool
    blocking: bool

    def transact(self, key: str, step: Callable[[S_co], T]) -> T: ...

    def close(self) -> None: ...


class InMemoryBackend(Generic[S]):
    """State in this process only; the default when one process owns a budget.

    Pass ``shared=True`` when several throttles (one per event loop or thread) use this one
    backend, so their waiters also notice each other's releases.
    """

    blocking = False

    def __init__(self, state_type: type[S], *, shared: bool = False) -> None:
        self.shared = shared
        self._type = state_type
        self._states: dict[str, S] = {}
        self._lock = threading.Lock()

    def transact(self, key: str, step: Callable[[S], T]) -> T:
        with self._lock:
            state = self._states.get(key)
            if state is None:
                state = self._states[key] = self._type()
            return step(state)

    def close(self) -> None:
        return None
