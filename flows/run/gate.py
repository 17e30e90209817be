"""Plan approval in the flow: the Prefect parts of the gate (:mod:`agents.writer.approval`).

For an item of a gated kind (``Kind.plan_approval``) in a repository whose base branch asks for
approval (``writer.approval``, carried in the task's rules), the policy of
:mod:`agents.writer.approval` runs a planning worker (it reads and proposes; nothing is
written) as one of this run's Prefect tasks and posts the plan on the issue once; this module
suspends its own flow run with ``asuspend_flow_run(wait_for_input=PlanDecision)``: while it
waits the run holds no process and no token, and the Prefect UI shows a form (approve, or
reject with a note). ``/swarm approve`` or ``/swarm reject NOTE`` on the issue, from someone
with write access, resumes it the same way (:func:`decide`, called by the webhook receiver).

Prefect runs a resumed flow run again from the start. So every step before the wait finds what
the first pass did: the gate's row keeps each attempt's plan (no second planning session), each
comment has its key and marker (posted once), and each wait has its own pause key, so Prefect
hands the re-run the decision it was given. A decision that never comes fails closed: nothing
is written, and the next implementer run (:func:`expire_gates`) says so on the issue once, fails
the suspended flow run if Prefect has not, and ends its store row.

A suspended flow run is rescheduled through its deployment; a run without one (``swarm run``,
the demo) cannot wait, so it writes nothing and says why.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from prefect.flow_runs import aresume_flow_run, asuspend_flow_run
from prefect.input import RunInput
from prefect.runtime import deployment as runtime_deployment
from prefect.runtime import flow_run as runtime_flow_run
from pydantic import Field

from agents.outcome import WorkerOutcome
from agents.redact import redact
from agents.work import Assignment
from agents.writer.approval import (
    GATE_MARK,
    NOTE_CHARS,
    Gate,
    approval_wait,
    end_timed_out,
    ended,
    expiry,
    gate_key,
    hold,
    left_alone,
    mark_waiting,
    read_gate,
    take_through,
    undecidable,
)

if TYPE_CHECKING:
    from agents.planning.shards import PlannedPR
    from agents.store.store import Store
    from agents.wiring import Runtime
    from agents.work import Task
    from flows.run.fanout import Fanout

log = logging.getLogger("flows.run.gate")


class PlanDecision(RunInput):
    """A maintainer's decision on the writer's plan: the form the Prefect UI shows for a run
    suspended at the gate, and what ``/swarm approve`` / ``/swarm reject NOTE`` send."""

    approve: bool = Field(default=False, description="Approve the plan: the writer writes it")
    note: str = Field(
        default="",
        max_length=NOTE_CHARS,
        description="For a rejection: what to change; the writer plans once more with it",
    )


@dataclass
class Gated:
    """What the gates let through (approved items carry their plan) and how the others ended."""

    planned: list[PlannedPR] = field(default_factory=list)
    outcomes: list[WorkerOutcome] = field(default_factory=list)


async def through_gates(
    runtime: Runtime,
    fanout: Fanout,
    plan: Sequence[PlannedPR],
    role: str,
    run_id: str,
    *,
    asked: bool,
) -> Gated:
    """``plan`` with every item whose repository asks for approval taken through its gate;
    ``asked``: the run names its issues (a person asked), so a gate an earlier run ended
    (rejected, timed out) starts again rather than being left. An item that waits for no
    approval costs nothing here: no token, no read."""
    gated = Gated()
    for planned in plan:
        task = planned.reviewers[0].task if planned.reviewers else None
        timeout_s = approval_wait(task) if task is not None and not runtime.dry_run else None
        if task is None or timeout_s is None:
            gated.planned.append(planned)
            continue
        approved = await _gate(runtime, fanout, task, role, run_id, timeout_s, asked, gated)
        if approved is not None:
            [first] = planned.reviewers
            gated.planned.append(
                dataclasses.replace(
                    planned, reviewers=[first.model_copy(update={"task": approved})], task=approved
                )
            )
    return gated


@dataclass
class _Steps:
    """The gate's steps that are this program's: the planning worker as one of the run's
    Prefect tasks, and the wait as this flow run's suspension."""

    fanout: Fanout
    store: Store
    role: str
    run_id: str

    async def plan(self, task: Task) -> WorkerOutcome | None:
        self.fanout.total += 1  # the planning worker, beside the workers the run counted
        return await self.fanout.run(Assignment(role=self.role, task=task))

    async def decision(self, gate: Gate, attempt: int) -> tuple[bool, str]:
        """Prefect's decision, at once on a run resumed after it was given; otherwise the rows
        say "waiting" and the flow run suspends (``Pause``)."""
        await mark_waiting(self.store, gate, self.run_id)
        # Prefect's input keys take lowercase letters, digits and dashes only: the gate
        # is named by a digest of its key, one wait per attempt.
        named = hashlib.sha256(gate.key.encode()).hexdigest()[:16]
        decided = await asuspend_flow_run(
            wait_for_input=PlanDecision,
            timeout=max(1, int(gate.deadline - time.time())),
            key=f"plan-{named}-{attempt}",
        )
        await asyncio.to_thread(self.store.set_run_waiting, self.run_id, False)
        return decided.approve, decided.note


async def _gate(
    runtime: Runtime,
    fanout: Fanout,
    task: Task,
    role: str,
    run_id: str,
    timeout_s: int,
    asked: bool,
    gated: Gated,
) -> Task | None:
    """The task to write, with its approved plan; None when the gate ends it (its outcome is
    in ``gated``). Raises Prefect's ``Pause`` when the run suspends to wait."""
    assert task.number is not None
    store = runtime.store
    flow_run = str(runtime_flow_run.id or "")
    key = gate_key(task.repo, task.number, role)
    found = await read_gate(store, key)
    left = left_alone(found, flow_run, asked)
    if left is not None:
        gated.outcomes.append(ended(role, task, "skipped", *left))
        return None
    if not runtime_deployment.id:
        why = (
            "writer.approval asks for a maintainer's approval of the plan, and only a "
            "deployment's run can wait for it (swarm serve, or the work pool): nothing written"
        )
        gated.outcomes.append(ended(role, task, "failed", "plan_unapproved", why))
        return None
    gate = await hold(store, found, key, flow_run, run_id, timeout_s)
    steps = _Steps(fanout, store, role, run_id)
    return await take_through(runtime, steps, gate, task, role, gated.outcomes)


async def expire_gates(runtime: Runtime) -> list[str]:
    """Gates whose wait ended without a decision: each says so on its issue once, its
    suspended flow run is failed (when Prefect has not failed it yet) and its run's row ends
    failed with the code ``plan_timed_out``. The issues' labels (``OWNER/NAME#N``)."""
    from prefect.client.orchestration import get_client
    from prefect.states import Failed

    store = runtime.store
    ended_here: list[str] = []
    rows = await asyncio.to_thread(store.keys_in_state, GATE_MARK, "waiting")
    for row in rows:
        gate = Gate.of(row.key, row.worker_id, row.state, row.unfinished)
        async with get_client() as client:
            try:
                found = await client.read_flow_run(uuid.UUID(gate.holder))
                state = found.state
            except Exception:  # gone from Prefect (or not an id): nothing waits any more
                state = None
            step = expiry(
                gate,
                found=state is not None,
                paused=state is not None and state.is_paused(),
                final=state is not None and state.is_final(),
            )
            if step == "leave":
                continue
            if step == "fail":
                why = "plan approval timed out: nothing written"
                await client.set_flow_run_state(
                    uuid.UUID(gate.holder), Failed(message=why), force=True
                )
        await end_timed_out(runtime, gate)
        repo, number, _ = gate.target
        ended_here.append(f"{repo}#{number}")
        log.info("%s#%d: the plan was not decided on in time; nothing written", repo, number)
    return ended_here


async def decide(
    store: Store, repo: str, number: int, role: str, *, approve: bool, note: str
) -> str | None:
    """Resume the flow run waiting on issue ``number``'s plan with a decision (the webhook's
    ``/swarm approve`` and ``/swarm reject NOTE``); None when it was resumed, else why not."""
    gate = await read_gate(store, gate_key(repo, number, role))
    refused = undecidable(gate)
    if refused is not None or gate is None:
        return refused
    decision = {"approve": approve, "note": redact(note)[:NOTE_CHARS]}
    try:
        await aresume_flow_run(uuid.UUID(gate.holder), run_input=decision)
    except Exception as exc:
        log.warning("%s#%d: the waiting run was not resumed: %s", repo, number, redact(str(exc)))
        return "the waiting run could not be resumed (it may have been decided already)"
    return None
