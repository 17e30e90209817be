"""The identity layer's GitHub calls, through the throttle of the identity they are made as.

Verifying a token (GraphQL ``viewer``, ``GET /installation/repositories``, a bot PAT's
``GET /user``) and revoking it (``DELETE /installation/token``, a write) spend the identity's
budget like any worker call: each takes its turn on the identity's throttle beside the workers'
requests (:class:`agents.github.turn.Turn`), and GitHub's answer, rate-limit pauses included,
folds into the same buckets.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import httpx

from agents.github.turn import Turn
from agents.ratelimit.github.requests import classify_graphql, classify_rest
from agents.ratelimit.github.throttle import IdentityThrottle
from agents.transport.calls import IdentityCall

# The worker id the identity layer's calls are counted under in the budget state.
IDENTITY_WORKER = "identity"


class ThrottledIdentityCalls:
    """:class:`agents.identity.api.IdentityCalls` over the process's throttles (by login)."""

    def __init__(
        self, throttles: Callable[[str], IdentityThrottle], *, worker_id: str = IDENTITY_WORKER
    ) -> None:
        self._throttles = throttles
        self.worker_id = worker_id

    async def send(
        self, call: IdentityCall, send: Callable[[], Awaitable[httpx.Response]]
    ) -> httpx.Response:
        """Send as ``call.login`` within its budget; a rate-limit answer is retried after its
        pause (never sooner), and a pause longer than ``max_inline_wait`` raises
        ``IdentityPaused`` with the pause recorded for every worker of the identity."""
        throttle = self._throttles(call.login)
        lim = throttle.limits
        if call.graphql:  # the identity layer's only GraphQL is the viewer query
            spec = classify_graphql(is_mutation=False, creates_content=False, limits=lim)
        else:
            spec = classify_rest(call.method, call.path, lim)
        turn = Turn(throttle, self.worker_id, spec)
        while True:
            permit = await turn.permit()
            try:
                response = await send()
            except BaseException:
                await turn.unanswered(permit)
                raise
            if await turn.answered(permit, response):
                return response
