"""Where budget state lives: one process (in memory) or a shared database (the store).

A state is any object that round-trips through a JSON dict (``to_dict`` / ``from_dict``) and has
an empty form (its class called without arguments). A backend runs one step on the state named
``key`` atomically with respect to every other user of that key, and keeps the result.

The shared rows come from outside (the store, handed in by the wiring module): this package only
says what it needs of them, :class:`StateRows`, and never imports the store.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import Any, Generic, Protocol, Self, TypeVar

from agents.json_value import JSONObject, JSONValue


class SharedState(Protocol):
    def __init__(self) -> None: ...

    def to_dict(self) -> JSONObject: ...

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self: ...


def known_fields(cls: type, data: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of ``data`` that name fields of the dataclass ``cls``: unknown keys are
    dropped, so a row written by another version of the state still loads."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


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


class StateRows(Protocol):
    """One JSON document per key, read and rewritten atomically (the store's row lock)."""

    def transact_state(
        self, key: str, step: Callable[[JSONObject], tuple[T, Mapping[str, JSONValue]]]
    ) -> T: ...


class RowBackend(Generic[S]):
    """State in rows every process and machine using the key shares (the store's).

    ``prefix`` keeps one kind of budget's keys apart from another's in the same rows (the
    GitHub throttle's keys, bot logins, go in as they are). The rows' owner opens and closes
    them; ``close`` here leaves them alone.
    """

    shared = True
    blocking = True

    def __init__(self, state_type: type[S], rows: StateRows, *, prefix: str = "") -> None:
        self._type = state_type
        self._rows = rows
        self._prefix = prefix

    def transact(self, key: str, step: Callable[[S], T]) -> T:
        def on_document(document: JSONObject) -> tuple[T, JSONObject]:
            state = self._type.from_dict(document)
            return step(state), state.to_dict()

        return self._rows.transact_state(self._prefix + key, on_document)

    def close(self) -> None:
        return None
