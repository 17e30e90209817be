"""How a worker's outcome becomes the task-run state people see in the UI, and back."""

from __future__ import annotations

from prefect.client.schemas.objects import State
from prefect.states import Cancelled, Completed, Failed

from agents.outcome import WorkerOutcome
from agents.redact import redact
from agents.work import Assignment


def worker_state(outcome: WorkerOutcome) -> State[WorkerOutcome]:
    """The task run state people see in the UI for each way a worker can end."""
    message = f"{outcome.target}: {outcome.status}" + (
        f": {outcome.reason}" if outcome.reason else ""
    )
    if outcome.status == "succeeded":
        return Completed(message=message, data=outcome)
    if outcome.status == "skipped":
        return Completed(name="Skipped", message=message, data=outcome)
    if outcome.status == "paused":
        return Cancelled(name="Paused", message=message, data=outcome)
    name = {"blocked": "Blocked", "budget_exhausted": "BudgetExhausted"}.get(
        outcome.status, "Failed"
    )
    return Failed(name=name, message=message, data=outcome)


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
