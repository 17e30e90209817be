"""A run's money: what it is expected to cost before it starts, and its cost cap while it runs.

The estimate is a model of a review session, not a measurement: a worker makes one call per
page of changed files plus a few fixed ones (read the PR, record progress, submit), each call
resends the cached prefix and the history so far, and the cache serves what the previous call
wrote. Prices are the model registry's, so ``SWARM_MODELS`` corrections apply. The per-turn
figures below were measured on the scripted model's reviews (``bench/context.py``); treat the
result as the right order of magnitude, not a quote.

The cap (``swarm run --max-cost``) is a hard one: a worker is dispatched only with a cost budget
that fits under the cap next to what finished workers spent and what running workers still hold
(their own cost budgets), so spend can never pass the cap by more than one model call per
worker. When what is left is less than one worker's expected cost, no new worker starts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from agents.llm.context import tier_for
from agents.llm.models import ModelSpec
from agents.work import Task

# Calls every review makes besides reading pages: read the PR, record progress, submit.
FIXED_CALLS = 3
PREFIX_TOKENS = 3_000  # tools, role identity, memory snapshot, guidance files
TOKENS_PER_CALL = 1_200  # what one call adds to the history (tool result, notes, turn context)
OUTPUT_PER_CALL = 250


@dataclass(frozen=True)
class WorkerEstimate:
    calls: int
    input_tokens: int  # uncached input
    cache_write_tokens: int
    cache_read_tokens: int
    output_tokens: int
    cost_usd: float

    @property
    def tokens(self) -> int:
        return (
            self.input_tokens
            + self.cache_write_tokens
            + self.cache_read_tokens
            + self.output_tokens
        )


def estimate_worker(task: Task, spec: ModelSpec, *, files: int | None = None) -> WorkerEstimate:
    """One review worker's expected calls, tokens and cost on the model ``spec``."""
    count = files if files is not None else max(1, len(task.files))
    per_page = tier_for(spec.context_window).files_per_page
    calls = FIXED_CALLS + math.ceil(count / per_page)
    write = PREFIX_TOKENS + (calls - 1) * TOKENS_PER_CALL
    # Call k reads what calls 1..k-1 wrote: the prefix plus k-2 turns of history.
    read = sum(PREFIX_TOKENS + (k - 2) * TOKENS_PER_CALL for k in range(2, calls + 1))
    uncached = calls * 50  # the per-turn context after the last breakpoint
    output = calls * OUTPUT_PER_CALL
    cost = (
        uncached * spec.input_per_mtok
        + write * spec.write_5m
        + read * spec.read
        + output * spec.output_per_mtok
    ) / 1_000_000
    return WorkerEstimate(calls, uncached, write, read, output, cost)


@dataclass(frozen=True)
class RunEstimate:
    prs: int
    workers: int
    tokens: int
    cost_usd: float
    model: str

    def line(self) -> str:
        return (
            f"estimate: {self.prs} PR(s), {self.workers} worker(s), about {self.tokens:,} tokens, "
            f"about ${self.cost_usd:.2f} on {self.model} at current prices"
        )


def estimate_run(
    prs: int, tasks: Sequence[Task], spec: ModelSpec, model: str
) -> tuple[RunEstimate, dict[str, WorkerEstimate]]:
    """The run's estimate, and each worker's (by task label) for the cost cap's floor."""
    each = {task.label + str(task.shard): estimate_worker(task, spec) for task in tasks}
    total = RunEstimate(
        prs=prs,
        workers=len(tasks),
        tokens=sum(e.tokens for e in each.values()),
        cost_usd=sum(e.cost_usd for e in each.values()),
        model=model,
    )
    return total, each


@dataclass
class CostCap:
    """The run's ``--max-cost``: spend so far, what running workers hold, what was left out."""

    limit: float | None
    spent: float = 0.0
    held: dict[str, float] = field(default_factory=dict)
    left_out: list[str] = field(default_factory=list)

    @property
    def left(self) -> float:
        if self.limit is None:
            return math.inf
        return self.limit - self.spent - sum(self.held.values())

    def grant(self, key: str, budget: float, expected: float) -> float | None:
        """The cost budget worker ``key`` may run with, or None (and it is left out) when the
        cap leaves less than its expected cost."""
        if self.limit is None:
            return budget
        left = self.left
        if left < max(expected, 1e-9):
            self.left_out.append(key)
            return None
        granted = min(budget, left)
        self.held[key] = granted
        return granted

    def settle(self, key: str, spent: float) -> None:
        """Worker ``key`` ended having spent ``spent``; its hold is released."""
        self.held.pop(key, None)
        self.spent += spent

    def reason(self) -> str:
        assert self.limit is not None
        return (
            f"the run's cost cap ${self.limit:.2f} would be passed (spent ${self.spent:.4f}, "
            f"running workers held ${sum(self.held.values()):.4f})"
        )
