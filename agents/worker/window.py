"""One session's context window: every request is estimated before it is sent and kept within
``window - max output - margin``.

The estimate is the request's characters over the model's calibrated characters-per-token
ratio (``agents.llm.estimate``; the LLM client folds each answer's ``usage`` into it). When a
request would pass the budget's high-water mark, older tool results become stubs
(``agents.llm.compaction``) and the request is rebuilt with a cache breakpoint at the end of
the stubbed part, so what comes before it stays byte-identical and is read from the cache.
A request that cannot be brought under the budget is never sent: :class:`ContextFull`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from agents.json_value import JSONValue
from agents.llm.compaction import Stubs, compact
from agents.llm.context import ContextBudget, ContextFull, TierPolicy
from agents.llm.estimate import Calibration, request_chars
from agents.llm.models import ModelSpec

# Builds the request from the history as sent and the index of its stub breakpoint.
BuildRequest = Callable[[Sequence[Mapping[str, JSONValue]], int | None], Mapping[str, object]]


@dataclass
class ContextWindow:
    """The budget, tier and stubs of one session, and the largest request it sent."""

    budget: ContextBudget
    calibration: Calibration
    stubs: Stubs = field(default_factory=Stubs)
    largest_estimate: int = 0
    # Compare a request's estimate with what the provider then counted (``observe``).
    last_estimate: int = 0

    @classmethod
    def for_model(cls, spec: ModelSpec, max_output: int, calibration: Calibration) -> ContextWindow:
        return cls(ContextBudget.for_window(spec.context_window, max_output), calibration)

    @property
    def policy(self) -> TierPolicy:
        """The tier's page sizes, held to a share of this budget at the current calibration."""
        return self.budget.policy(self.calibration.chars_per_token)

    def request(
        self, messages: Sequence[Mapping[str, JSONValue]], build: BuildRequest
    ) -> Mapping[str, object]:
        """The next request, within the budget; raises :class:`ContextFull` when it cannot be."""
        request = build(self.stubs.apply(messages), self.stubs.boundary)
        tokens = self.calibration.estimate(request)
        if tokens > self.budget.high_water:
            fixed = self.calibration.tokens(
                request_chars({k: request[k] for k in ("tools", "system") if k in request})
            )
            self.stubs = compact(
                messages,
                self.stubs,
                fixed_tokens=fixed,
                chars_per_token=self.calibration.chars_per_token,
                budget=self.budget,
            )
            request = build(self.stubs.apply(messages), self.stubs.boundary)
            tokens = self.calibration.estimate(request)
        if tokens > self.budget.limit:
            raise ContextFull(
                f"the next request is estimated at {tokens} input tokens, over the "
                f"{self.budget.limit}-token budget of a {self.budget.window}-token window; "
                "nothing was sent"
            )
        self.last_estimate = tokens
        self.largest_estimate = max(self.largest_estimate, tokens)
        return request

    def record(self) -> dict[str, int | str]:
        """What the worker's record keeps about its context: tier, budget, peak, compactions."""
        return {
            "context_tier": self.policy.tier.value,
            "context_window": self.budget.window,
            "context_budget": self.budget.limit,
            "largest_request_tokens": self.largest_estimate,
            "compactions": self.stubs.compactions,
            "stubbed_results": len(self.stubs.replaced),
        }
