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
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, cast

from prefect import Task, task
from prefect import tags as prefect_tags
from prefect.artifacts import aupdate_progress_artifact
from prefect.cache_policies import NO_CACHE
from prefect.client.schemas.objects import State

from agents.dispatch.envelope import Budgets, SealedEnvelope
from agents.kinds.book import RoleBook
from agents.outcome import WorkerOutcome
from agents.planning.costs import CostCap
from agents.planning.shards import PlannedPR, settle, worker_budget_tokens
from agents.posting.notes import PullNote
from agents.redact import redact
from agents.roles import RoleRefs
from agents.work import Assignment, Spend
from agents.work import Task as WorkTask
from flows.run.adapters import role_identity
from flows.run.events import emit_for
from flows.run.pages import publish_worker, ui_link, worker_key
from flows.run.report import ended_line
from flows.run.states import outcome_from_state, worker_state
from flows.run.tokens import TokenKeeper

if TYPE_CHECKING:
    from agents.wiring import Runtime
    from agents.worker.deps import WorkerDeps

log = logging.getLogger("flows.run.fanout")
# The count alone, apart: the terminal has a progress bar for it (see flows.local.env).
progress_log = logging.getLogger("flows.run.fanout.progress")
PROGRESS_EVERY_S = 1.0

# Who watches the progress of the runs started in this context, called with (finished, total):
# the CLI's progress bar. Context-local, so concurrent runs in other contexts never see it.
_PROGRESS_LISTENER: ContextVar[Callable[[int, int], None] | None] = ContextVar(
    "swarm_progress_listener", default=None
)


@contextmanager
def watching_progress(listener: Callable[[int, int], None]) -> Iterator[None]:
    """Call ``listener(finished, total)`` as the workers of runs started inside finish."""
    token = _PROGRESS_LISTENER.set(listener)
    try:
        yield
    finally:
        _PROGRESS_LISTENER.reset(token)


def spent_by(outcomes: Sequence[WorkerOutcome]) -> Spend:
    """What these workers spent together (a summarizer's shards, for its summary)."""
    return Spend(
        cost_usd=sum(o.cost_usd for o in outcomes),
        input_tokens=sum(
            o.input_tokens + o.cache_read_tokens + o.cache_write_tokens for o in outcomes
        ),
        output_tokens=sum(o.output_tokens for o in outcomes),
        model_calls=sum(o.llm_calls for o in outcomes),
    )


class WorkerCrashed(RuntimeError):
    """A worker raised instead of returning an outcome; the message is already redacted."""


WorkerTask = Task[..., Coroutine[Any, Any, State[WorkerOutcome]]]


def _worker_task(worker: WorkerDeps, timings: Fanout) -> WorkerTask:
    """This run's worker task. It closes over the run's worker dependencies: Prefect sees, and
    stores, only the parameters, and those never carry a client, a key or a token."""

    # The run name comes from the ``label`` parameter: cheaper than ``with_options`` per call.
    @task(
        name="swarm-worker",
        task_run_name="{label}",
        cache_policy=NO_CACHE,
        persist_result=False,
    )
    async def worker_task(
        sealed: SealedEnvelope | None,
        role: str,
        target: str,
        label: str,
        blocked_reason: str | None = None,
    ) -> State[WorkerOutcome]:
        """Run one worker from its sealed envelope and turn its outcome into a task state."""
        if sealed is None:
            outcome = WorkerOutcome(
                worker_id="-", role=role, target=target, status="blocked", reason=blocked_reason
            )
            await timings.show(label, outcome, None)
            return worker_state(outcome)
        from agents.worker.run import run_worker

        started = time.perf_counter()
        try:
            outcome = await run_worker(sealed, worker)
        except Exception as exc:
            # Prefect stores the exception text in the task state: it must be redacted first.
            raise WorkerCrashed(f"{type(exc).__name__}: {redact(str(exc))}") from None
        finally:
            timings.worker_s += time.perf_counter() - started
        await timings.show(label, outcome, sealed.envelope.budgets)
        return worker_state(outcome)

    return worker_task


class Fanout:
    """One run's context: its workers under one concurrency cap, their progress and timings."""

    def __init__(
        self,
        run_id: str,
        runtime: Runtime,
        max_workers: int,
        total: int,
        cap: CostCap | None = None,
        expected: Callable[[WorkTask], float] = lambda _task: 0.0,
    ) -> None:
        self.run_id = run_id
        self.cap = cap or CostCap(None)
        self.expected = expected
        self.runtime = runtime
        self.limit = asyncio.Semaphore(max_workers)
        self.total = max(total, 1)
        self.done = 0
        self._next_tick = 0.0
        self.progress_id: uuid.UUID | None = None
        self.left_out: list[str] = []  # PRs (labels) the cost cap left without a review
        self.on_progress = _PROGRESS_LISTENER.get()
        self.dispatch_s = 0.0
        # role -> (session, call) overlays of its workers, not its summarizer: --overlay, focus.
        self.overlays: dict[str, tuple[str | None, str | None]] = {}
        self.task_s = 0.0
        self.worker_s = 0.0  # inside the workers: the rest of a task run is orchestration
        self._worker_task = _worker_task(runtime.worker, self)
        self.keeper = TokenKeeper(runtime.dispatcher)
        # Task-run name -> assignment, for the worker's page; task-run names are unique per run.
        self._assignments: dict[str, Assignment] = {}
        self._pages: dict[str, str] = {}
        self._publishing: list[asyncio.Task[None]] = []
        # (outcome, task-run name) in the order workers ended, for the run's table.
        self._ended: list[tuple[WorkerOutcome, str]] = []
        # PRs whose review cannot finish for a lasting reason: the run posts these notes.
        self.notes: list[PullNote] = []
        # PRs (labels) whose review was posted although some of their shards did not finish.
        self.settled: list[str] = []

    async def show(self, label: str, outcome: WorkerOutcome, budgets: Budgets | None) -> None:
        """The worker's event, and its artifact published beside the next worker's run (the
        task's context goes with it, so it is still the task run's): :meth:`settle` waits."""
        emit_for(self._assignments[label], outcome)
        self._publishing.append(asyncio.create_task(self._publish(label, outcome, budgets)))

    async def _publish(self, label: str, outcome: WorkerOutcome, budgets: Budgets | None) -> None:
        assignment = self._assignments[label]
        try:
            kind = RoleBook(self.runtime.roles).kind_of(assignment.role)
            words = kind.words if kind is not None else None
            artifact_id = await publish_worker(assignment, outcome, budgets, words)
        except Exception as exc:  # a page that cannot be published is only a warning
            log.warning("%s: its artifact could not be published: %s", label, redact(str(exc)))
            return
        self._pages[label] = ui_link(artifact_id) or worker_key(assignment)

    async def settle(self) -> None:
        """Every worker's page published: :attr:`pages` links them all from here on."""
        await asyncio.gather(*self._publishing)

    @property
    def pages(self) -> list[tuple[WorkerOutcome, str]]:
        """(outcome, link or key of its page, "-" if none) in the order workers ended."""
        return [(o, self._pages.get(label, "-")) for o, label in self._ended]

    def page_of(self, outcome: WorkerOutcome) -> str:
        """Where this outcome's worker page is (matched by identity: outcomes are values)."""
        return next((self._pages.get(name, "-") for o, name in self._ended if o is outcome), "-")

    async def run(
        self, assignment: Assignment, parents: Sequence[WorkerOutcome] = ()
    ) -> WorkerOutcome | None:
        """The worker's outcome; None when the cost cap leaves no room to start it."""
        identity = role_identity(self.runtime, assignment.role)
        task = assignment.task
        if parents:
            task = task.with_findings(
                [f for parent in parents for f in parent.findings], spent_by(parents)
            )
        tags = [f"role:{assignment.role}", f"identity:{identity}", f"repo:{task.repo}"]
        self._assignments[assignment.run_name] = assignment
        key = (assignment.role, task.repo)
        self.keeper.queue(key)
        async with self.limit:
            role_budget = self.runtime.roles[assignment.role].limits.max_cost_usd
            granted = self.cap.grant(assignment.run_name, role_budget, self.expected(task))
            if granted is None:
                await self.keeper.leave(key, None)
                await self._tick()
                return None
            sealed: SealedEnvelope | None = None
            blocked: str | None = None
            started = time.perf_counter()
            limits = self.runtime.roles[assignment.role].limits
            session, call = self.overlays.get(assignment.role, (None, None))
            try:
                sealed = await self.runtime.dispatcher.dispatch(
                    self.run_id,
                    task,
                    RoleRefs(agent=assignment.role, session=session, call=call),
                    cost_budget=granted,
                    token_budget=worker_budget_tokens(
                        assignment.expected_tokens, limits.max_tokens
                    ),
                )
            except Exception as exc:
                blocked = f"BLOCKED: dispatch refused: {redact(str(exc))}"
                log.warning("%s: %s", assignment.run_name, blocked)
            await self.keeper.leave(key, sealed)
            dispatched = time.perf_counter()
            self.dispatch_s += dispatched - started
            try:
                with prefect_tags(*tags):
                    pending = self._worker_task(
                        sealed,
                        assignment.role,
                        task.label,
                        assignment.run_name,
                        blocked_reason=blocked,
                        return_state=True,
                    )
                    state = await cast(Awaitable[State[WorkerOutcome]], pending)
                self.task_s += time.perf_counter() - dispatched
            finally:
                if sealed is not None:
                    await self._release(sealed, assignment)
        worker_id = sealed.envelope.worker_id if sealed is not None else "-"
        outcome = await outcome_from_state(state, assignment, worker_id)
        if task.shard is not None:
            part = f"shard {task.shard.index + 1}/{task.shard.count} ({len(task.files)} files)"
            outcome = outcome.model_copy(update={"shard": part})
        kind = RoleBook(self.runtime.roles).kind_of(assignment.role)
        log.info("%s: %s", assignment.run_name, ended_line(outcome, kind.words if kind else None))
        self._ended.append((outcome, assignment.run_name))
        self.cap.settle(assignment.run_name, outcome.cost_usd)
        await self._tick()
        return outcome

    async def _release(self, sealed: SealedEnvelope, assignment: Assignment) -> None:
        try:
            await self.runtime.dispatcher.release(sealed)
        except Exception as exc:
            log.warning("%s: revoking its token failed: %s", assignment.run_name, redact(str(exc)))

    async def _tick(self) -> None:
        self.done += 1
        if self.on_progress is not None:
            self.on_progress(self.done, self.total)
        # The log line and the UI's progress bar cost a record and an API call each: at most
        # one a second per run, and always the last.
        now = time.monotonic()
        if now < self._next_tick and self.done < self.total:
            return
        self._next_tick = now + PROGRESS_EVERY_S
        progress_log.info("%d of %d workers finished", self.done, self.total)
        if self.progress_id is not None:
            await aupdate_progress_artifact(
                self.progress_id,
                progress=100.0 * self.done / self.total,
                description=f"{self.done} of {self.total} workers finished",
            )

    async def run_pr(self, planned: PlannedPR) -> list[WorkerOutcome]:
        """The PR's workers to their end, and its review or its note: the summarizer merges
        what the shards found even when some did not finish (naming the files they left), and
        a PR whose review cannot finish for a lasting reason gets a note (:attr:`notes`)."""
        started = await asyncio.gather(*(self.run(a) for a in planned.reviewers))
        outcomes = [o for o in started if o is not None]
        if len(outcomes) < len(started):
            self.left_out.append(planned.reviewers[0].task.label)
            return outcomes
        settled = settle(planned, outcomes)
        if settled.note is not None:
            self.notes.append(settled.note)
        summarizer = planned.summarizer
        if settled.action == "done" or summarizer is None:
            return outcomes
        if settled.action == "retry":
            outcomes.append(self._not_summarized(summarizer, settled.unfinished, len(outcomes)))
            await self._tick()
            return outcomes
        if settled.action == "note":
            await self._tick()  # the summarizer that will not run
            return outcomes
        task = summarizer.task.model_copy(
            update={"listed": (*summarizer.task.listed, *settled.left)}
        )
        summary = await self.run(summarizer.model_copy(update={"task": task}), outcomes)
        if summary is None:
            self.left_out.append(summarizer.task.label)
        elif settled.unfinished and (
            summary.posted or summary.dry_run_preview or summary.status == "skipped"
        ):
            self.settled.append(summarizer.task.label)
        return [*outcomes, *([summary] if summary else [])]

    def _not_summarized(
        self, summarizer: Assignment, unfinished: int, shards: int
    ) -> WorkerOutcome:
        return WorkerOutcome(
            worker_id="-",
            role=summarizer.role,
            target=summarizer.task.label,
            status="failed",
            reason=(
                f"not summarized: {unfinished} of {shards} shards did not finish, some for a "
                "reason that may pass; nothing posted, the next run retries this PR"
            ),
        )
