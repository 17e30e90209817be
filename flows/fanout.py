"""Workers as Prefect task runs: dispatch each, run it under the concurrency cap, read its state.

Each worker is a task run awaited in the flow's own event loop, so all workers of a run share
its gateways, throttles and store. Its final state tells how it ended: Completed, Skipped,
Paused (Cancelled), or a FAILED state named Blocked / BudgetExhausted / Failed whose message is
the reason. A worker that raises still yields an outcome; it never takes the run down.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from prefect import tags as prefect_tags
from prefect import task
from prefect.artifacts import aupdate_progress_artifact
from prefect.cache_policies import NO_CACHE
from prefect.client.schemas.objects import State
from prefect.states import Cancelled, Completed, Failed

from agents.envelope import SealedEnvelope
from agents.outcome import WorkerOutcome
from agents.planning import Assignment, PlannedPR
from agents.redact import redact
from flows.runtime_glue import role_identity

if TYPE_CHECKING:
    from agents.wiring import Runtime

log = logging.getLogger("flows.fanout")


# Runtimes of the flow runs alive in this process, by swarm run id. Tasks look theirs up here
# instead of receiving it as a parameter: a runtime holds clients and keys, never a parameter.
RUNTIMES: dict[str, Runtime] = {}
# Seconds spent inside run_worker, per swarm run: the rest of a task run's time is orchestration.
WORKER_SECONDS: dict[str, float] = {}
# In-process observers of worker progress, called with (finished, total): the CLI's progress bar.
PROGRESS_LISTENERS: list[Callable[[int, int], None]] = []


class WorkerCrashed(RuntimeError):
    """A worker raised instead of returning an outcome; the message is already redacted."""


def _worker_state(outcome: WorkerOutcome) -> State[Any]:
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


# The run name comes from the ``label`` parameter: cheaper than ``with_options`` per call.
@task(
    name="swarm-worker",
    task_run_name="{label}",
    cache_policy=NO_CACHE,
    persist_result=False,
)
async def worker_task(
    run_id: str,
    sealed: SealedEnvelope | None,
    role: str,
    target: str,
    label: str,
    blocked_reason: str | None = None,
) -> State[Any]:
    """Run one worker from its sealed envelope and turn its outcome into a task state."""
    if sealed is None:
        return _worker_state(
            WorkerOutcome(
                worker_id="-", role=role, target=target, status="blocked", reason=blocked_reason
            )
        )
    from agents.worker import run_worker

    runtime = RUNTIMES[run_id]
    started = time.perf_counter()
    try:
        outcome = await run_worker(sealed, runtime)
    except Exception as exc:
        # Prefect stores the exception text in the task state: it must be redacted first.
        raise WorkerCrashed(f"{type(exc).__name__}: {redact(str(exc))}") from None
    finally:
        WORKER_SECONDS[run_id] = WORKER_SECONDS.get(run_id, 0.0) + (time.perf_counter() - started)
    return _worker_state(outcome)


async def _outcome_from_state(
    state: State[Any], assignment: Assignment, worker_id: str
) -> WorkerOutcome:
    data = await state.aresult(raise_on_failure=False)
    if isinstance(data, WorkerOutcome):
        return data
    reason = redact(str(data)) if isinstance(data, BaseException) else (state.message or "")
    return WorkerOutcome(
        worker_id=worker_id,
        role=assignment.role,
        target=f"{assignment.pr}@{assignment.head_sha[:7]}",
        status="failed",
        reason=f"crashed: {reason}",
    )


class Fanout:
    """Dispatches and runs workers under one concurrency cap, counting progress as they end."""

    def __init__(self, run_id: str, runtime: Runtime, max_workers: int, total: int) -> None:
        self.run_id = run_id
        self.runtime = runtime
        self.limit = asyncio.Semaphore(max_workers)
        self.total = max(total, 1)
        self.done = 0
        self.progress_id: uuid.UUID | None = None
        self.dispatch_s = 0.0
        self.task_s = 0.0

    async def run(
        self, assignment: Assignment, parents: Sequence[WorkerOutcome] = ()
    ) -> WorkerOutcome:
        from agents.dispatch import WorkTask

        identity = role_identity(self.runtime, assignment.role)
        target = f"{assignment.pr}@{assignment.head_sha[:7]}"
        tags = [f"role:{assignment.role}", f"identity:{identity}", f"repo:{assignment.repo}"]
        async with self.limit:
            sealed: SealedEnvelope | None = None
            blocked: str | None = None
            started = time.perf_counter()
            try:
                findings = [f for parent in parents for f in parent.findings]
                work = WorkTask(**assignment.task_fields(findings))
                sealed = await self.runtime.dispatcher.dispatch(self.run_id, work, assignment.role)
            except Exception as exc:
                blocked = f"BLOCKED: dispatch refused: {redact(str(exc))}"
                log.warning("%s: %s", assignment.run_name, blocked)
            dispatched = time.perf_counter()
            self.dispatch_s += dispatched - started
            try:
                with prefect_tags(*tags):
                    pending = worker_task(
                        self.run_id,
                        sealed,
                        assignment.role,
                        target,
                        assignment.run_name,
                        blocked_reason=blocked,
                        return_state=True,
                    )
                    state = await cast(Awaitable[State[Any]], pending)
                self.task_s += time.perf_counter() - dispatched
            finally:
                if sealed is not None:
                    await self._release(sealed, assignment)
        worker_id = sealed.envelope.worker_id if sealed is not None else "-"
        outcome = await _outcome_from_state(state, assignment, worker_id)
        await self._tick()
        return outcome

    async def _release(self, sealed: SealedEnvelope, assignment: Assignment) -> None:
        try:
            await self.runtime.dispatcher.release(sealed)
        except Exception as exc:
            log.warning("%s: revoking its token failed: %s", assignment.run_name, redact(str(exc)))

    async def _tick(self) -> None:
        self.done += 1
        for listener in PROGRESS_LISTENERS:
            listener(self.done, self.total)
        if self.progress_id is not None:
            await aupdate_progress_artifact(
                self.progress_id,
                progress=100.0 * self.done / self.total,
                description=f"{self.done} of {self.total} workers finished",
            )

    async def run_pr(self, planned: PlannedPR) -> list[WorkerOutcome]:
        outcomes = list(await asyncio.gather(*(self.run(a) for a in planned.reviewers)))
        if planned.summarizer is None:
            return outcomes
        if all(o.status == "succeeded" for o in outcomes):
            outcomes.append(await self.run(planned.summarizer, outcomes))
            return outcomes
        unfinished = sum(1 for o in outcomes if o.status != "succeeded")
        s = planned.summarizer
        outcomes.append(
            WorkerOutcome(
                worker_id="-",
                role=s.role,
                target=f"{s.pr}@{s.head_sha[:7]}",
                status="failed",
                reason=(
                    f"not summarized: {unfinished} of {len(planned.reviewers)} shards did not "
                    "finish; nothing posted, the next run retries this PR"
                ),
            )
        )
        await self._tick()
        return outcomes
