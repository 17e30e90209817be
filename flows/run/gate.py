"""Plan approval in the flow (:mod:`agents.writer.approval`): plan, post, wait, decide.

For an implement item of a repository whose base branch asks for approval
(``writer.approval``), the flow runs a planning worker (it reads and proposes; nothing is
written), posts the plan on the issue once, and suspends its own flow run with
``asuspend_flow_run(wait_for_input=PlanDecision)``: while it waits the run holds no process and
no token, and the Prefect UI shows a form (approve, or reject with a note). ``/swarm approve``
or ``/swarm reject NOTE`` on the issue, from someone with write access, resumes it the same way
(:func:`decide`, called by the webhook receiver).

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

from agents.outcome import EndCode, OutcomeStatus, WorkerOutcome
from agents.redact import redact
from agents.work import Assignment
from agents.writer.approval import (
    FINAL_STATES,
    GATE_MARK,
    MAX_ATTEMPTS,
    NOTE_CHARS,
    Gate,
    comment_key,
    comment_once,
    gate_key,
    guidance_for,
    plan_text,
    read_gate,
    save_gate,
    stopped_text,
    timed_out_text,
    writer_rules,
)
from flows.run.adapters import role_identity

if TYPE_CHECKING:
    from agents.planning.shards import PlannedPR
    from agents.store.store import Store
    from agents.wiring import Runtime
    from agents.work import Task
    from flows.run.fanout import Fanout

log = logging.getLogger("flows.run.gate")

# What the gate's GitHub steps need: the base branch's settings, and the comments.
GATE_PERMISSIONS = {"metadata": "read", "contents": "read", "issues": "write"}


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


def _ended(role: str, task: Task, status: OutcomeStatus, code: EndCode, why: str) -> WorkerOutcome:
    return WorkerOutcome(
        worker_id="-", role=role, target=task.label, status=status, code=code, reason=why
    )


async def through_gates(
    runtime: Runtime,
    fanout: Fanout,
    plan: Sequence[PlannedPR],
    role: str,
    run_id: str,
    *,
    asked: bool,
) -> Gated:
    """``plan`` with every implement item of a repository that asks for approval taken through
    its gate; ``asked``: the run names its issues (a person asked), so a gate an earlier run
    ended (rejected, timed out) starts again rather than being left."""
    gated = Gated()
    for planned in plan:
        task = planned.reviewers[0].task if planned.reviewers else None
        if task is None or task.kind != "implement" or task.number is None or runtime.dry_run:
            gated.planned.append(planned)
            continue
        identity = role_identity(runtime, role)
        async with runtime.discovery(identity, [task.repo], GATE_PERMISSIONS) as (gateway, _):
            rules = await writer_rules(gateway, task.repo)
        if not rules.approval:
            gated.planned.append(planned)
            continue
        approved = await _gate(
            runtime, fanout, task, role, run_id, rules.approval_timeout_seconds, asked, gated
        )
        if approved is not None:
            [first] = planned.reviewers
            gated.planned.append(
                dataclasses.replace(
                    planned, reviewers=[first.model_copy(update={"task": approved})], task=approved
                )
            )
    return gated


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
    gate = await read_gate(store, key)
    if gate is not None and gate.holder != flow_run:
        if gate.state == "waiting" and not gate.expired:
            why = f"its plan waits for a maintainer's decision in flow run {gate.holder}"
            gated.outcomes.append(_ended(role, task, "skipped", "plan_unapproved", why))
            return None
        if gate.state in ("rejected", "timed_out") and not asked:
            said = "rejected" if gate.state == "rejected" else "not decided on in time"
            why = f"its plan was {said}; ask again with /swarm implement"
            code: EndCode = "plan_rejected" if gate.state == "rejected" else "plan_timed_out"
            gated.outcomes.append(_ended(role, task, "skipped", code, why))
            return None
    if not runtime_deployment.id:
        why = (
            "writer.approval asks for a maintainer's approval of the plan, and only a "
            "deployment's run can wait for it (swarm serve, or the work pool): nothing written"
        )
        gated.outcomes.append(_ended(role, task, "failed", "plan_unapproved", why))
        return None
    if gate is None or gate.holder != flow_run:
        gate = Gate(key=key, holder=flow_run, state="planning", run_id=run_id, timeout_s=timeout_s)
        await save_gate(store, gate)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        if len(gate.plans) < attempt:
            planning = task.model_copy(update={"planning": True, "guidance": guidance_for(gate)})
            fanout.total += 1  # the planning worker, beside the workers the run counted
            outcome = await fanout.run(Assignment(role=role, task=planning))
            if outcome is not None:
                gated.outcomes.append(outcome)
            plan = outcome.written.plan if outcome and outcome.written else ""
            if outcome is None or outcome.status != "succeeded" or not plan:
                gate.state = "ended"
                await save_gate(store, gate)
                return None
            gate.plans.append(plan)
            await save_gate(store, gate)
        text = plan_text(gate, attempt, gate.plans[attempt - 1], flow_run)
        await _comment(runtime, role, gate, f"plan-{attempt}", text)
        decision = await _wait(store, gate, attempt, run_id)
        if decision.approve:
            gate.state = "approved"
            await save_gate(store, gate)
            return task.model_copy(update={"guidance": gate.plans[attempt - 1]})
        if len(gate.notes) < attempt:
            gate.notes.append(redact(decision.note)[:NOTE_CHARS])
        gate.state = "planning"
        await save_gate(store, gate)
    await _comment(runtime, role, gate, "stopped", stopped_text())
    gate.state = "rejected"
    await save_gate(store, gate)
    why = f"a maintainer rejected its plan {MAX_ATTEMPTS} times: nothing written"
    gated.outcomes.append(_ended(role, task, "skipped", "plan_rejected", why))
    return None


async def _wait(store: Store, gate: Gate, attempt: int, run_id: str) -> PlanDecision:
    """The decision on ``attempt``'s plan: Prefect's, at once on a run resumed after it was
    given; otherwise the run's row says "waiting" and the flow run suspends (``Pause``)."""
    if gate.state != "waiting":
        gate.state = "waiting"
        gate.deadline = time.time() + gate.timeout_s
        await save_gate(store, gate)
    await asyncio.to_thread(store.set_run_waiting, run_id, True)
    # Prefect's input keys take lowercase letters, digits and dashes only: the gate is
    # named by a digest of its key, one wait per attempt.
    named = hashlib.sha256(gate.key.encode()).hexdigest()[:16]
    decision = await asuspend_flow_run(
        wait_for_input=PlanDecision,
        timeout=max(1, int(gate.deadline - time.time())),
        key=f"plan-{named}-{attempt}",
    )
    await asyncio.to_thread(store.set_run_waiting, run_id, False)
    return decision


async def _comment(runtime: Runtime, role: str, gate: Gate, what: str, text: str) -> None:
    repo, number, _ = gate.target
    identity = role_identity(runtime, role)
    async with runtime.discovery(identity, [repo], GATE_PERMISSIONS) as (gateway, login):
        if login is None:
            raise RuntimeError("the writer bot's login is not verified: its plan is not posted")
        await comment_once(
            runtime.store,
            gateway,
            repo,
            number,
            comment_key(gate, what),
            text,
            login=login,
            holder=f"gate-{uuid.uuid4().hex[:12]}",
        )


async def expire_gates(runtime: Runtime) -> list[str]:
    """Gates whose wait ended without a decision: each says so on its issue once, its
    suspended flow run is failed (when Prefect has not failed it yet) and its run's row ends
    failed with the code ``plan_timed_out``. The issues' labels (``OWNER/NAME#N``)."""
    from prefect.client.orchestration import get_client
    from prefect.states import Failed

    store = runtime.store
    ended: list[str] = []
    rows = await asyncio.to_thread(store.keys_in_state, GATE_MARK, "waiting")
    for row in rows:
        gate = Gate.of(row.key, row.worker_id, row.state, row.unfinished)
        async with get_client() as client:
            try:
                found = await client.read_flow_run(uuid.UUID(gate.holder))
                state = found.state
            except Exception:  # gone from Prefect (or not an id): nothing waits any more
                state = None
            if state is not None and not (state.is_paused() or state.is_final()):
                continue  # resumed: deciding now
            if state is not None and state.is_paused():
                if not gate.expired:
                    continue
                why = "plan approval timed out: nothing written"
                await client.set_flow_run_state(
                    uuid.UUID(gate.holder), Failed(message=why), force=True
                )
        repo, number, role = gate.target
        await _comment(runtime, role, gate, "timed-out", timed_out_text(gate))
        gate.state = "timed_out"
        await save_gate(store, gate)
        await asyncio.to_thread(_end_run, store, gate)
        ended.append(f"{repo}#{number}")
        log.info("%s#%d: the plan was not decided on in time; nothing written", repo, number)
    return ended


def _end_run(store: Store, gate: Gate) -> None:
    """The waiting run's row ends failed, saying why and with the end code."""
    from agents.store.base import StoreError

    try:
        totals = dict(store.get_run(gate.run_id).totals or {})
    except StoreError:
        return
    totals.update(
        code="plan_timed_out",
        reason=f"no maintainer decided on the plan within {gate.timeout_s} s: nothing written",
    )
    store.finish_run(gate.run_id, "failed", totals)


async def decide(
    store: Store, repo: str, number: int, role: str, *, approve: bool, note: str
) -> str | None:
    """Resume the flow run waiting on issue ``number``'s plan with a decision (the webhook's
    ``/swarm approve`` and ``/swarm reject NOTE``); None when it was resumed, else why not."""
    gate = await read_gate(store, gate_key(repo, number, role))
    if gate is None or gate.state in FINAL_STATES:
        return "no plan of the writer waits for a decision on this issue"
    if gate.state != "waiting":
        return "the writer is still planning: decide once its plan is posted"
    if gate.expired:
        return "the plan was not decided on in time; ask again with /swarm implement"
    decision = {"approve": approve, "note": redact(note)[:NOTE_CHARS]}
    try:
        await aresume_flow_run(uuid.UUID(gate.holder), run_input=decision)
    except Exception as exc:
        log.warning("%s#%d: the waiting run was not resumed: %s", repo, number, redact(str(exc)))
        return "the waiting run could not be resumed (it may have been decided already)"
    return None
