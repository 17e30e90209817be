"""One identity's throttle: GitHub's policy on the engine.

Waiting requests queue per lane (a resource's reads, or its writes) and take turns across
workers (:mod:`agents.ratelimit.turns`): a mutation waiting out its 1 s spacing does not hold up
reads, and one busy worker cannot starve the others. What a request may do now is
:func:`agents.ratelimit.github.buckets.decide`; what GitHub's answer changes,
:func:`agents.ratelimit.github.readings.observe`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TypeAlias

from agents.ratelimit.backend import StateBackend
from agents.ratelimit.clock import Clock
from agents.ratelimit.decision import Decision
from agents.ratelimit.github.buckets import IdentityState, decide
from agents.ratelimit.github.limits import ThrottleLimits
from agents.ratelimit.github.readings import Answer, apply_rate_limit_body, observe
from agents.ratelimit.github.requests import RequestSpec
from agents.ratelimit.github.snapshot import IdentitySnapshot, build_snapshot
from agents.ratelimit.pause import Pause
from agents.ratelimit.permit import Permit
from agents.ratelimit.throttle import Throttle

# Where an identity's state lives: in this process (the default), or in the store's rows
# (``RowBackend``) when several processes or machines share the identity.
BudgetBackend: TypeAlias = StateBackend[IdentityState]
NO_ANSWER = Answer(None, {})


class GitHubPolicy:
    """GitHub's limits for one identity, as the engine asks for them."""

    state_type = IdentityState

    def __init__(self, limits: ThrottleLimits) -> None:
        self.limits = limits

    def lane(self, request: RequestSpec) -> Hashable:
        return (request.resource, request.is_write)

    def decide(
        self,
        state: IdentityState,
        request: RequestSpec,
        reservation_id: str,
        worker_id: str,
        now: float,
    ) -> Decision:
        return decide(state, request, reservation_id, worker_id, now, self.limits)

    def settle(
        self, state: IdentityState, permit: Permit[RequestSpec], now: float, answer: Answer | None
    ) -> Pause | None:
        spec, rid = permit.request, permit.reservation_id
        return observe(state, rid, spec, now, answer or NO_ANSWER, self.limits)


class IdentityThrottle(Throttle[RequestSpec, IdentityState, Answer]):
    """The budget of the bot login ``identity``, shared by all its workers in this event loop."""

    def __init__(
        self,
        identity: str,
        *,
        limits: ThrottleLimits | None = None,
        clock: Clock | None = None,
        backend: BudgetBackend | None = None,
    ) -> None:
        if not identity:
            raise ValueError("IdentityThrottle needs the identity's login")
        self.identity = identity
        self.limits = limits or ThrottleLimits()
        super().__init__(
            identity,
            GitHubPolicy(self.limits),
            subject=f"identity {identity}",
            clock=clock,
            backend=backend,
        )

    async def absorb_rate_limit_body(self, body: Mapping[str, object]) -> None:
        """Fold in a ``GET /rate_limit`` body: every resource's figures at once."""
        await self.transact(lambda s: apply_rate_limit_body(s, body))

    async def snapshot(self) -> IdentitySnapshot:
        now, waiting = self.clock.now(), self.waiting
        return await self.transact(lambda s: build_snapshot(self.identity, s, now, waiting))
