"""One request's turns on its identity's budget: leave to send, the answer settled, a rate-limit
answer retried after its pause or reported.

Both ways to GitHub as an identity take their turns this way: the gateway's calls
(:mod:`agents.github.throttled_client`) and the identity layer's own (verifying, revoking a
token: :mod:`agents.github.identity_calls`), so the one budget sees every request of the
identity, and every pause is said as :class:`IdentityPaused`.
"""

from __future__ import annotations

import httpx

from agents.github.errors import IdentityPaused
from agents.github.responses import error_message, graphql_rate_limited
from agents.ratelimit import Paused, Permit
from agents.ratelimit.github.readings import Answer
from agents.ratelimit.github.requests import RequestSpec
from agents.ratelimit.github.throttle import IdentityThrottle


class Turn:
    """``spec`` sent as ``worker_id`` through ``throttle``: ask :meth:`permit`, send, then
    :meth:`answered` with the response; False means "rate-limited: ask for a permit again"."""

    def __init__(self, throttle: IdentityThrottle, worker_id: str, spec: RequestSpec) -> None:
        self.throttle = throttle
        self.worker_id = worker_id
        self.spec = spec
        self.rate_limited = 0

    async def permit(self) -> Permit[RequestSpec]:
        """Wait for the identity's leave; a pause too long to sleep through is raised."""
        try:
            return await self.throttle.acquire(self.worker_id, self.spec)
        except Paused as exc:
            raise self._paused(exc.until, exc.reason, exc.now) from None

    async def answered(self, permit: Permit[RequestSpec], response: httpx.Response) -> bool:
        """Settle the permit with GitHub's answer: True when it stands (whatever its status),
        False when it was a rate-limit answer to retry once its pause is over (the next permit
        waits for that), and :class:`IdentityPaused` when the pause is too long or keeps
        coming."""
        limited = self.spec.resource == "graphql" and graphql_rate_limited(response)
        message = error_message(response) if response.is_error else None
        answer = Answer(response.status_code, response.headers, message, limited)
        pause = await self.throttle.settle(permit, answer)
        if pause is None:
            return True
        self.rate_limited += 1
        lim = self.throttle.limits
        if self.throttle.reports(pause) or self.rate_limited > lim.max_rate_limit_retries:
            raise self._paused(pause.until, pause.reason)
        return False

    async def unanswered(self, permit: Permit[RequestSpec]) -> None:
        """The request got no answer (a timeout, a refusal before sending, a cancelled caller)."""
        await self.throttle.abandon(permit)

    def _paused(self, until: float, reason: str, now: float | None = None) -> IdentityPaused:
        """The engine's pause, said as the GitHub layer's error for this identity."""
        moment = self.throttle.clock.now() if now is None else now
        return IdentityPaused(self.throttle.identity, until, reason, now=moment)
