"""A worker's budgets and what it has spent against them (turns, tokens, cost, GitHub calls,
wall time). Crossing any budget ends the worker as ``budget_exhausted`` with a clear reason.

The token budget counts billed tokens (:func:`agents.llm.usage.billed_tokens`): cache reads at a
tenth, writes at their surcharge, as the provider bills them; the raw counters are kept beside
them in the record and the transcript."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from agents.dispatch.envelope import Budgets
from agents.llm.client import LLMResult
from agents.llm.models import DEFAULT_REGISTRY, ModelRegistry, UnknownModel
from agents.llm.usage import Usage, billed_tokens, cost
from agents.outcome import EndCode


class BudgetExhausted(Exception):
    """The message says which budget ran out and by how much; ``code`` names it for code."""

    def __init__(self, message: str, code: EndCode) -> None:
        super().__init__(message)
        self.code: EndCode = code

    def __reduce__(self) -> tuple[type[BudgetExhausted], tuple[str, EndCode]]:
        # Pickled whole (a Prefect result, a process pool): the default would rebuild it from
        # the message alone and lose the code.
        return (BudgetExhausted, (str(self), self.code))


@dataclass
class Meter:
    """Running totals of one worker, checked against its envelope's budgets."""

    budgets: Budgets
    started: float = field(default_factory=time.monotonic)
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    # The token budget's measure: tokens as billed (cache reads at a tenth...).
    billed_tokens: int = 0
    cost_usd: float = 0.0
    github_calls: int = 0
    graphql_calls: int = 0
    # Prices per model id: the run's registry, with SWARM_MODELS applied.
    registry: ModelRegistry = DEFAULT_REGISTRY
    # The session's context record (tier, budget, largest request), kept with what was spent.
    context: Callable[[], Mapping[str, int | str]] | None = None

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def wall_seconds_left(self) -> float:
        return max(0.0, self.budgets.wall_seconds - self.elapsed())

    def charge(self, result: LLMResult, model: str) -> tuple[float, int]:
        """Count one model call; returns what it cost and its billed tokens."""
        try:
            spec = self.registry.spec(result.model or model)
        except UnknownModel:
            spec = self.registry.spec(model)  # the provider named a model id we do not know
        call_cost = cost(result.usage, spec)
        billed = billed_tokens(result.usage, spec)
        self.turns += 1
        self.usage = self.usage + result.usage
        self.billed_tokens += billed
        self.cost_usd += call_cost
        return call_cost, billed

    def count_github_call(self, graphql: bool) -> None:
        self.github_calls += 1
        self.graphql_calls += int(graphql)

    def check(self) -> None:
        """Raise :class:`BudgetExhausted` when any budget is spent."""
        b = self.budgets
        if self.turns >= b.turns:
            raise BudgetExhausted(f"turn budget spent ({self.turns} of {b.turns} turns)", "turns")
        billed = self.billed_tokens
        if billed >= b.llm_tokens:
            raise BudgetExhausted(
                f"token budget spent ({billed:,} of {b.llm_tokens:,} billed tokens; "
                f"{self.usage.total_tokens:,} raw)",
                "tokens",
            )
        if self.cost_usd >= b.cost_usd:
            raise BudgetExhausted(
                f"cost budget spent (${self.cost_usd:.4f} of ${b.cost_usd:.2f})", "cost"
            )
        if self.github_calls >= b.github_calls:
            raise BudgetExhausted(
                f"GitHub call budget spent ({self.github_calls} of {b.github_calls} calls)",
                "github_calls",
            )
        if self.elapsed() >= b.wall_seconds:
            raise self.wall_time_spent()

    def wall_time_spent(self) -> BudgetExhausted:
        return BudgetExhausted(
            f"wall-time budget spent ({self.elapsed():.0f} s of {self.budgets.wall_seconds:.0f} s)",
            "wall_time",
        )

    def left(self) -> dict[str, int | float | str]:
        """What is left, for the model's ``<turn_context>``."""
        b = self.budgets
        return {
            "turns": b.turns - self.turns,
            "tokens": b.llm_tokens - self.billed_tokens,
            "cost_usd": round(b.cost_usd - self.cost_usd, 4),
            "github_calls": b.github_calls - self.github_calls,
            "seconds": round(b.wall_seconds - self.elapsed(), 1),
        }

    def used(self) -> dict[str, int | float | str]:
        """What was spent, and the context tier it was spent in, as the store records it."""
        return {
            **(self.context() if self.context else {}),
            "turns": self.turns,
            "llm_calls": self.turns,
            "tokens": self.usage.total_tokens,
            "billed_tokens": self.billed_tokens,
            "cost_usd": round(self.cost_usd, 6),
            "github_calls": self.github_calls,
            "wall_seconds": round(self.elapsed(), 3),
        }
