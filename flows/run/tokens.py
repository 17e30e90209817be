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

from agents.dispatch.dispatcher import Dispatcher
from agents.dispatch.envelope import SealedEnvelope

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
        stale: str | None = None
        async with self._lock:
            self._queued[key] -= 1
            if self._queued[key] > 0:
                held = self._holds.get(key)
                # A worker handed a newer token (the held one is near its expiry) moves the hold:
                # the old token then dies with the last worker that still uses it.
                if sealed is not None and (
                    held is None or not self.dispatcher.same_token(held, sealed)
                ):
                    hold = await self.dispatcher.hold_like(sealed)
                    if hold is not None:
                        self._holds[key], stale = hold, held
            else:
                del self._queued[key]
                stale = self._holds.pop(key, None)
        if stale is not None:
            await self.dispatcher.release(stale)
