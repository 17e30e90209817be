"""A run's money at the flow's level: its estimate, announced before any worker starts, and the
cost cap handed to the fan-out (the arithmetic lives in ``agents.planning.costs``)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

from agents.planning.costs import RunEstimate, estimate_run

if TYPE_CHECKING:
    from agents.planning.shards import PlannedPR
    from agents.wiring import Runtime
    from agents.work import Task

log = logging.getLogger("flows.run.spend")

# Who hears the run's estimate before its workers start (the CLI prints it). Context-local,
# like the progress listener, so concurrent runs never hear each other's.
_ESTIMATE_LISTENER: ContextVar[Callable[[RunEstimate], None] | None] = ContextVar(
    "swarm_estimate_listener", default=None
)


@contextmanager
def watching_estimate(listener: Callable[[RunEstimate], None]) -> Iterator[None]:
    token = _ESTIMATE_LISTENER.set(listener)
    try:
        yield
    finally:
        _ESTIMATE_LISTENER.reset(token)


def announce_estimate(
    runtime: Runtime, plan: Sequence[PlannedPR]
) -> tuple[RunEstimate, Callable[[Task], float]]:
    """The run's estimate (logged, and told to the listener) and each worker's expected cost."""
    model = runtime.model_id
    spec = runtime.llm.registry.spec(model)
    tasks = [a.task for p in plan for a in p.assignments]
    estimate, each = estimate_run(len(plan), tasks, spec, model)
    log.info("%s", estimate.line())
    listener = _ESTIMATE_LISTENER.get()
    if listener is not None:
        listener(estimate)

    def expected(task: Task) -> float:
        found = each.get(task.label + str(task.shard))
        return found.cost_usd if found is not None else 0.0

    return estimate, expected
