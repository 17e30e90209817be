"""The identity layer's GitHub calls, through the throttle of the identity they are made as.

Verifying a token (GraphQL ``viewer``, ``GET /installation/repositories``, a bot PAT's
``GET /user``) and revoking it (``DELETE /installation/token``, a write) spend the identity's
budget like any worker call. The identity layer is synchronous and runs in worker threads, while a
throttle's waiting queue lives on its event loop, so a call from a thread takes its turn on the
identity's budget state directly, as another process sharing the identity does: the same decision
reserves it (pauses, concurrency, mutation spacing, point windows, the primary budget), it waits
in its own thread, and the same reading folds in GitHub's answer, rate-limit pauses included.
The loop's waiters are then woken, as by a local release.

A waiting thread is not in the loop's queue: it looks again when its wait is due, or every
``shared_poll_interval`` while it waits for another request to end.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable

import httpx

from agents.github.errors import IdentityPaused
from agents.github.responses import error_message, graphql_rate_limited
from agents.ratelimit import Decision, Pause, Permit
from agents.ratelimit.clock import Clock
from agents.ratelimit.github.buckets import IdentityState, decide
from agents.ratelimit.github.readings import Answer, observe
from agents.ratelimit.github.requests import RequestSpec, classify_graphql, classify_rest
from agents.ratelimit.github.throttle import IdentityThrottle
from agents.ratelimit.waiting import MIN_SLEEP

# The worker id the identity layer's calls are counted under in the budget state.
IDENTITY_WORKER = "identity"


class ThrottledIdentityCalls:
    """:class:`agents.identity.api.IdentityCalls` over the process's throttles (by login)."""

    def __init__(
        self, throttles: Callable[[str], IdentityThrottle], *, worker_id: str = IDENTITY_WORKER
    ) -> None:
        self._throttles = throttles
        self.worker_id = worker_id

    def send(
        self,
        login: str,
        method: str,
        path: str,
        send: Callable[[], httpx.Response],
        *,
        graphql: bool,
    ) -> httpx.Response:
        """Send as ``login`` within its budget; a rate-limit answer is retried after its pause
        (never sooner), and a pause longer than ``max_inline_wait`` raises :class:`IdentityPaused`
        with the pause recorded for every worker of the identity."""
        throttle = self._throttles(login)
        lim = throttle.limits
        if graphql:  # the identity layer's only GraphQL is the viewer query
            spec = classify_graphql(is_mutation=False, creates_content=False, limits=lim)
        else:
            spec = classify_rest(method, path, lim)
        rate_limited = 0
        while True:
            permit = self._acquire(throttle, spec)
            try:
                response = send()
            except BaseException:
                self._complete(throttle, permit, Answer(None, {}))
                raise
            message = error_message(response) if response.is_error else None
            limited = graphql and graphql_rate_limited(response)
            pause = self._complete(
                throttle, permit, Answer(response.status_code, response.headers, message, limited)
            )
            if pause is None:
                return response
            rate_limited += 1
            if throttle.reports(pause) or rate_limited > lim.max_rate_limit_retries:
                now = throttle.clock.now()
                raise IdentityPaused(throttle.identity, pause.until, pause.reason, now=now)

    def _acquire(self, throttle: IdentityThrottle, spec: RequestSpec) -> Permit[RequestSpec]:
        rid = f"{self.worker_id}-{uuid.uuid4().hex[:16]}"
        clock, lim, worker = throttle.clock, throttle.limits, self.worker_id
        requested = clock.now()
        while True:
            now = clock.now()

            def reserve(state: IdentityState, now: float = now) -> Decision:
                return decide(state, spec, rid, worker, now, lim)

            decision = throttle.backend.transact(throttle.identity, reserve)
            if decision.granted:
                return Permit(rid, worker, spec, requested, now)
            due = decision.wait_until
            if decision.paused and due is not None and due - now > lim.max_inline_wait:
                raise IdentityPaused(throttle.identity, due, decision.reason, now=now)
            # No due time: another request must end first, and nobody tells this thread when.
            _sleep(clock, (due if due is not None else now + lim.shared_poll_interval) - now)

    def _complete(
        self, throttle: IdentityThrottle, permit: Permit[RequestSpec], answer: Answer
    ) -> Pause | None:
        now = throttle.clock.now()

        def fold_in(state: IdentityState) -> Pause | None:
            return observe(
                state, permit.reservation_id, permit.request, now, answer, throttle.limits
            )

        try:
            return throttle.backend.transact(throttle.identity, fold_in)
        finally:
            throttle.wake()


def _sleep(clock: Clock, seconds: float) -> None:
    # A clock's sleep is a coroutine (the clock may run faster than the wall's): this thread runs
    # it on a loop of its own, never on the throttle's.
    asyncio.run(clock.sleep(max(seconds, MIN_SLEEP)))
