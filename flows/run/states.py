"""How a worker's outcome becomes the task-run state people see in the UI, and back."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from prefect.client.schemas.objects import State, StateType
from prefect.states import Cancelled, Completed, Failed

from agents.outcome import OutcomeStatus, WorkerOutcome
from agents.redact import redact
from agents.work import Assignment

# Each outcome's task-run state: its type (what Prefect does with it: a FAILED one fails the
# run's flow run) and the name the UI shows. A paused worker is not a failure and not done
# either: Cancelled is the type Prefect has for work left for later.
STATE_OF: Mapping[OutcomeStatus, tuple[StateType, str]] = {
    "succeeded": (StateType.COMPLETED, "Completed"),
    "skipped": (StateType.COMPLETED, "Skipped"),
    "paused": (StateType.CANCELLED, "Paused"),
    "blocked": (StateType.FAILED, "Blocked"),
    "budget_exhausted": (StateType.FAILED, "BudgetExhausted"),
    "failed": (StateType.FAILED, "Failed"),
}
# Prefect's own constructors (they also carry the trace context), by type.
_MAKE: Mapping[StateType, Callable[..., State[Any]]] = {
    StateType.COMPLETED: Completed,
    StateType.CANCELLED: Cancelled,
    StateType.FAILED: Failed,
}


def worker_state(outcome: WorkerOutcome) -> State[WorkerOutcome]:
    """The task run state people see in the UI for each way a worker can end."""
    message = f"{outcome.target}: {outcome.status}" + (
        f": {outcome.reason}" if outcome.reason else ""
    )
    kind, name = STATE_OF[outcome.status]
    return _MAKE[kind](name=name, message=message, data=outcome)


async def outcome_from_state(
    state: State[WorkerOutcome], assignment: Assignment, worker_id: str
) -> WorkerOutcome:
    data = await state.aresult(raise_on_failure=False)
    if isinstance(data, WorkerOutcome):
        return data
    reason = redact(str(data)) if isinstance(data, BaseException) else (state.message or "")
    return WorkerOutcome(
        worker_id=worker_id,
        role=assignment.role,
        target=assignment.task.label,
        status="failed",
        reason=f"crashed: {reason}",
    )
