"""Every identity's throttle in one process, by bot login, built on first use.

One login, one throttle: all workers of the identity and the identity layer's own calls as it
(verifying a token, revoking it) draw on the same budget.
"""

from __future__ import annotations

from collections.abc import Callable

from agents.ratelimit import InMemoryBackend
from agents.ratelimit.github.buckets import IdentityState
from agents.ratelimit.github.limits import ThrottleLimits
from agents.ratelimit.github.throttle import BudgetBackend, IdentityThrottle
from agents.ratelimit.per_key import PerKey


def in_memory() -> BudgetBackend:
    return InMemoryBackend(IdentityState)


class IdentityThrottles:
    """``throttles(login)``: the identity's throttle; thread-safe, so worker threads may ask."""

    def __init__(
        self,
        backend: Callable[[], BudgetBackend] = in_memory,
        limits: ThrottleLimits | None = None,
    ) -> None:
        self.limits = limits
        self._backend = backend
        self._throttles: PerKey[str, IdentityThrottle] = PerKey(
            lambda login: IdentityThrottle(login, limits=self.limits, backend=self._backend())
        )

    def __call__(self, login: str) -> IdentityThrottle:
        return self._throttles[login]

    def all(self) -> dict[str, IdentityThrottle]:
        return self._throttles.made()

    def close(self) -> None:
        for throttle in self.all().values():
            throttle.backend.close()
