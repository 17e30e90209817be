"""One value per key, made on first use and the same one after, for every thread of a process:
each budget's throttle by name (an identity's, a key and model class's), a model's calibration.

One budget, one throttle: two throttles for one name would each believe they had the whole
budget, so the value is made under a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class PerKey(Generic[K, V]):
    """``per_key[key]``: ``make(key)`` the first time, that same value every time after."""

    def __init__(self, make: Callable[[K], V]) -> None:
        self._make = make
        self._made: dict[K, V] = {}
        self._lock = threading.Lock()

    def __getitem__(self, key: K) -> V:
        with self._lock:
            found = self._made.get(key)
            if found is None:
                found = self._made[key] = self._make(key)
            return found

    def made(self) -> dict[K, V]:
        """Every value made so far, by key (a copy: later ones are not added to it)."""
        with self._lock:
            return dict(self._made)
