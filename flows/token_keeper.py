"""One token per scope across the workers of a run that follow each other.

A shared installation token is revoked with its last holder. Workers of one scope (role and
repository) that run one after another, as under a low concurrency cap, would each mint a token,
prove it with two GitHub reads, and revoke it: four requests and 11 REST points per worker
against the identity's secondary limits. The run therefore keeps the token of a scope while
more workers of that scope are queued, and lets go as the last of them is dispatched, so the
token is still revoked when its last worker ends.
"""

from __future__ import annotations

import asyncio
from collections import Counter

from agents.dispatch import Dispatcher
from agents.envelope import SealedEnvelope

ScopeKey = tuple[str, str]  # (role, repository): the dispatcher scopes a token by both


class TokenKeeper:
    def __init__(self, dispatcher: Dispatcher) -> None:
        self.dispatcher = dispatcher
        self._queued: Counter[ScopeKey] = Counter()
        self._holds: dict[ScopeKey, str] = {}
        self._lock = asyncio.Lock()  # two workers of a key leaving at once take one hold

    def queue(self, key: ScopeKey) -> None:
        """A worker of ``key`` waits for its turn; :meth:`leave` when it got (or lost) it. A run
        that ends between the two leaves the hold to the dispatcher, which revokes at its close."""
        self._queued[key] += 1

    async def leave(self, key: ScopeKey, sealed: SealedEnvelope | None) -> None:
        """One worker of ``key`` left the queue, holding ``sealed`` (None: it got no token)."""
        async with self._lock:
            self._queued[key] -= 1
            if self._queued[key] > 0:
                if key not in self._holds and sealed is not None:
                    hold = await self.dispatcher.hold_like(sealed)
                    if hold is not None:
                        self._holds[key] = hold
                return
            del self._queued[key]
            hold = self._holds.pop(key, None)
        if hold is not None:
            await self.dispatcher.release(hold)
