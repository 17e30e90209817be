"""Where an identity's budget state lives: one process (default) or shared state rows.

Shared rows come from outside this layer (the store, handed in by the wiring module): this
layer only says what it needs of them, :class:`StateRows`, and never imports the store.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

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


class StateRows(Protocol):
    """One JSON document per identity, read and rewritten atomically (a row lock)."""

    def transact_state(
        self, identity: str, step: Callable[[dict[str, Any]], tuple[T, Mapping[str, Any]]]
    ) -> T: ...


class RowBackend:
    """State in rows every process and machine using the identity shares (the store's).

    The rows' owner opens and closes them; ``close`` here leaves them alone.
    """

    shared = True
    blocking = True

    def __init__(self, rows: StateRows) -> None:
        self._rows = rows

    def transact(self, identity: str, step: Callable[[IdentityState], T]) -> T:
        def on_document(document: dict[str, Any]) -> tuple[T, Mapping[str, Any]]:
            state = IdentityState.from_dict(document)
            return step(state), state.to_dict()

        return self._rows.transact_state(identity, on_document)

    def close(self) -> None:
        return None
