"""Plan approval: the writer's plan waits for a maintainer before anything is written.

Optional per repository (``writer.approval`` in the base branch's ``.github/swarm.yaml``, read by
the kind's discovery and carried in the task's rules) for the kinds that say so
(``Kind.plan_approval``). The gate runs a planning session (it reads and proposes; no branch, no
commit), posts its plan on the issue once, and waits until someone with write access decides:
in the Prefect UI's form, or with ``/swarm approve`` / ``/swarm reject NOTE`` on the issue. A
rejection with a note plans once more; a second rejection stops, and a decision that never
comes fails closed. Nothing is written to the repository before an approval. The policy is
here; the program's parts (the planning worker as a Prefect task, the suspension and the
resume, the waiting flow run's state) are :mod:`flows.run.gate`'s, behind :class:`GateSteps`.

A suspended flow run runs again from the start when resumed, so every step before the wait is
idempotent: the gate's row in the store (key ``OWNER/NAME#N/plan:ROLE``) keeps each attempt's
plan (no second planning session), each comment has its own key and hidden marker (posted
once), and the wait itself is keyed by attempt, so Prefect hands a re-run the decision it has.
The row also names the suspended flow run, which is how a ``/swarm approve`` comment finds the
run to resume.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from agents.outcome import EndCode, OutcomeStatus, WorkerOutcome
from agents.planning.repo_config import FileReads, RepoConfigError, config_at
from agents.posting.keys import find_own_comment, inert, with_comment_marker
from agents.posting.once import Claims, create_or_find, write_once
from agents.redact import redact
from agents.work import RepoRules

if TYPE_CHECKING:
    from agents.store.store import Store
    from agents.wiring import Runtime
    from agents.work import Task

# Where a gate stands; "waiting" is the only state a decision may resume.
GateState = Literal["planning", "waiting", "approved", "rejected", "timed_out", "ended"]
FINAL_STATES: frozenset[str] = frozenset({"approved", "rejected", "timed_out", "ended"})
# What marks a gate's row among the store's keys.
GATE_MARK = "/plan:"
# A plan is planned twice at most: once, and once more after a rejection with a note.
MAX_ATTEMPTS = 2
NOTE_CHARS = 2000
# What the gate's GitHub steps need: the issue's comments. The repository's rules came with the
# task (:func:`approval_rules`), so the gate reads no file.
GATE_PERMISSIONS = {"metadata": "read", "issues": "write"}


def gate_key(repo: str, number: int, role: str) -> str:
    """The store key of issue ``number``'s gate for ``role``: one per issue and role."""
    return f"{repo}#{number}{GATE_MARK}{role}"


@dataclass
class Gate:
    """One issue's gate as the store keeps it. ``holder`` is the flow run that waits (the one a
    decision resumes); ``plans`` and ``notes`` are each attempt's plan and rejection note;
    ``deadline`` is when the current wait times out (epoch seconds, 0 before any wait)."""

    key: str
    holder: str
    state: str
    run_id: str
    timeout_s: int
    plans: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    deadline: float = 0.0

    @property
    def expired(self) -> bool:
        return bool(self.deadline) and time.time() >= self.deadline

    @property
    def target(self) -> tuple[str, int, str]:
        """(repo, issue number, role) from the key."""
        where, _, role = self.key.partition(GATE_MARK)
        repo, _, number = where.rpartition("#")
        return repo, int(number), role

    def doc(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "timeout_s": self.timeout_s,
            "plans": list(self.plans),
            "notes": list(self.notes),
            "deadline": self.deadline,
        }

    @classmethod
    def of(cls, key: str, holder: str, state: str, doc: Mapping[str, Any] | None) -> Gate:
        doc = doc or {}
        return cls(
            key=key,
            holder=holder,
            state=state,
            run_id=str(doc.get("run_id") or ""),
            timeout_s=int(doc.get("timeout_s") or 0),
            plans=[str(p) for p in doc.get("plans") or ()],
            notes=[str(n) for n in doc.get("notes") or ()],
            deadline=float(doc.get("deadline") or 0.0),
        )


class GateRows(Protocol):
    """The store's rows a gate lives in (:mod:`agents.store.reviews`)."""

    def get_review_key(self, key: str) -> Any: ...

    def put_gate(self, key: str, holder: str, state: str, doc: Mapping[str, Any]) -> None: ...


async def read_gate(store: GateRows, key: str) -> Gate | None:
    found = await asyncio.to_thread(store.get_review_key, key)
    if found is None:
        return None
    return Gate.of(key, str(found.worker_id), str(found.state), found.unfinished)


async def save_gate(store: GateRows, gate: Gate) -> None:
    await asyncio.to_thread(store.put_gate, gate.key, gate.holder, gate.state, gate.doc())


def guidance_for(gate: Gate) -> str:
    """What the next planning session is told: the plan a maintainer rejected and their note
    ("" on the first attempt)."""
    if not gate.notes:
        return ""
    note = gate.notes[-1].strip() or "(no note)"
    return f"Your earlier plan:\n{gate.plans[-1]}\n\nThe maintainer's note:\n{note}"


def comment_key(gate: Gate, what: str) -> str:
    """The key of one of the gate's comments: per waiting flow run, so a later gate on the same
    issue (after a timeout, say) speaks again."""
    return f"{gate.key}/{gate.holder}/{what}"


def _hours(seconds: int) -> str:
    if seconds % 3600 == 0:
        return f"{seconds // 3600} hour(s)"
    if seconds % 60 == 0:
        return f"{seconds // 60} minute(s)"
    return f"{seconds} second(s)"


def plan_text(gate: Gate, attempt: int, plan: str, flow_run: str) -> str:
    """The plan comment: the model's plan (redacted, made inert, quoted) and how to decide."""
    quoted = "\n".join(f"> {line}" for line in inert(redact(plan)).strip().splitlines())
    again = " (planned again after a rejection)" if attempt > 1 else ""
    return (
        f"The swarm's writer plans to implement this issue as follows{again}:\n\n{quoted}\n\n"
        "Nothing is written to the repository until someone with write access decides: "
        "comment `/swarm approve`, or `/swarm reject` with a note for one more plan; or "
        f"approve or reject it in the Prefect UI (flow run `{flow_run}`). Without a decision "
        f"within {_hours(gate.timeout_s)} nothing is written."
    )


def stopped_text() -> str:
    return (
        "The writer's plan was rejected twice, so it stops here: nothing was written to the "
        "repository. Ask again with `/swarm implement` when the issue says more."
    )


def timed_out_text(gate: Gate) -> str:
    return (
        f"No one decided on the writer's plan within {_hours(gate.timeout_s)}, so it stops "
        "here: nothing was written to the repository. Ask again with `/swarm implement`."
    )


class IssueComments(Protocol):
    """The gateway's issue-comment calls, made as the bot."""

    async def list_issue_comments(self, repo: str, number: int) -> list[dict[str, Any]]: ...

    async def create_issue_comment(
        self, repo: str, number: int, body: str, *, mentions: Collection[str] = ()
    ) -> dict[str, Any]: ...


@dataclass(frozen=True)
class BotComments:
    """Comments written once each, as the bot ``login`` over ``gateway``, claimed in ``claims``
    by ``holder``."""

    claims: Claims
    gateway: IssueComments
    login: str
    holder: str

    async def once(
        self, repo: str, number: int, key: str, text: str, *, mentions: Collection[str] = ()
    ) -> None:
        """Comment ``text`` on issue ``number`` once under ``key``: the store's claim, then the
        bot's own hidden marker on GitHub, decide whether it was written already."""
        body = with_comment_marker(text, key)
        gateway, login = self.gateway, self.login

        async def find() -> dict[str, Any] | None:
            found = find_own_comment(await gateway.list_issue_comments(repo, number), key, login)
            return dict(found) if found is not None else None

        async def create() -> dict[str, Any]:
            async def post() -> dict[str, Any]:
                made = await gateway.create_issue_comment(repo, number, body, mentions=mentions)
                return {"id": made.get("id"), "html_url": made.get("html_url")}

            return dict(await create_or_find(post, find, f"comment {key}"))

        # The flow writes these within seconds of claiming them: a claim nobody finished is
        # taken over once GitHub shows no marker.
        await write_once(
            self.claims, key, self.holder, find=find, create=create, alive=lambda _claim: False
        )


# -- which items wait, and for how long ---------------------------------------------------------


async def approval_rules(gateway: FileReads, repo: str) -> RepoRules:
    """What ``repo``'s default branch asks of plan approval, as the task's rules carry it to the
    flow's gate: read once per repository by the kind's discovery, so a run whose repositories
    ask for none mints nothing for the gate. An invalid file asks for nothing here: the
    writer's bench refuses it, with the reason, before anything is written."""
    try:
        writer = (await config_at(gateway, repo)).writer
    except RepoConfigError:
        return RepoRules()
    wait = writer.approval_timeout_seconds if writer.approval else None
    return RepoRules(approval_timeout_s=wait)


def approval_wait(task: Task) -> int | None:
    """How long ``task``'s plan waits for a maintainer (seconds); None when it is written without
    one: its kind is not gated (``Kind.plan_approval``), it names no issue, or its repository
    asks for no approval."""
    from agents.kinds.kind import for_task

    kind = for_task(task.kind)
    if kind is None or not kind.plan_approval or task.number is None or task.planning:
        return None
    return task.rules.approval_timeout_s


def ended(role: str, task: Task, status: OutcomeStatus, code: EndCode, why: str) -> WorkerOutcome:
    """How an item the gate ended is reported: no worker ran for it."""
    return WorkerOutcome(
        worker_id="-", role=role, target=task.label, status=status, code=code, reason=why
    )


def left_alone(gate: Gate | None, flow_run: str, asked: bool) -> tuple[EndCode, str] | None:
    """Why a run leaves an issue whose gate another flow run holds (its code and reason), or
    None when this run takes it through its gate: a plan still waiting is that run's, and one a
    maintainer rejected or let time out waits for a person to ask again (``asked``: this run
    names its issues, so a person did)."""
    if gate is None or gate.holder == flow_run:
        return None
    if gate.state == "waiting" and not gate.expired:
        why = f"its plan waits for a maintainer's decision in flow run {gate.holder}"
        return "plan_unapproved", why
    if gate.state in ("rejected", "timed_out") and not asked:
        said = "rejected" if gate.state == "rejected" else "not decided on in time"
        code: EndCode = "plan_rejected" if gate.state == "rejected" else "plan_timed_out"
        return code, f"its plan was {said}; ask again with /swarm implement"
    return None


# -- one issue through its gate -----------------------------------------------------------------


async def hold(
    store: GateRows, found: Gate | None, key: str, flow_run: str, run_id: str, timeout_s: int
) -> Gate:
    """The gate ``flow_run`` holds: the one it held before it was resumed, or a new one."""
    if found is not None and found.holder == flow_run:
        return found
    gate = Gate(key=key, holder=flow_run, state="planning", run_id=run_id, timeout_s=timeout_s)
    await save_gate(store, gate)
    return gate


async def mark_waiting(store: Store, gate: Gate, run_id: str) -> None:
    """The gate's row says "waiting" until its deadline (set once: a run resumed after the
    decision finds it so already), and so does its run's row."""
    if gate.state != "waiting":
        gate.state = "waiting"
        gate.deadline = time.time() + gate.timeout_s
        await save_gate(store, gate)
    await asyncio.to_thread(store.set_run_waiting, run_id, True)


class GateSteps(Protocol):
    """What the program around the gate does for it (:mod:`flows.run.gate`): run a planning
    worker, and wait for the decision on an attempt's plan (which may suspend the program)."""

    async def plan(self, task: Task) -> WorkerOutcome | None: ...

    async def decision(self, gate: Gate, attempt: int) -> tuple[bool, str]:
        """(approved, the note) for ``attempt``'s plan."""
        ...


async def take_through(
    runtime: Runtime,
    steps: GateSteps,
    gate: Gate,
    task: Task,
    role: str,
    outcomes: list[WorkerOutcome],
) -> Task | None:
    """The task to write, with its approved plan; None when the gate ends it (its outcome is in
    ``outcomes``). Each attempt is planned once (the row keeps its plan), its comment posted
    once, and decided; a rejection with a note plans once more, a second one stops."""
    store = runtime.store
    flow_run = gate.holder
    for attempt in range(1, MAX_ATTEMPTS + 1):
        if len(gate.plans) < attempt:
            planning = task.model_copy(update={"planning": True, "guidance": guidance_for(gate)})
            outcome = await steps.plan(planning)
            if outcome is not None:
                outcomes.append(outcome)
            plan = outcome.written.plan if outcome and outcome.written else ""
            if outcome is None or outcome.status != "succeeded" or not plan:
                gate.state = "ended"
                await save_gate(store, gate)
                return None
            gate.plans.append(plan)
            await save_gate(store, gate)
        text = plan_text(gate, attempt, gate.plans[attempt - 1], flow_run)
        await post_on_issue(runtime, role, gate, f"plan-{attempt}", text)
        approve, note = await steps.decision(gate, attempt)
        if approve:
            gate.state = "approved"
            await save_gate(store, gate)
            return task.model_copy(update={"guidance": gate.plans[attempt - 1]})
        if len(gate.notes) < attempt:
            gate.notes.append(redact(note)[:NOTE_CHARS])
        gate.state = "planning"
        await save_gate(store, gate)
    await post_on_issue(runtime, role, gate, "stopped", stopped_text())
    gate.state = "rejected"
    await save_gate(store, gate)
    why = f"a maintainer rejected its plan {MAX_ATTEMPTS} times: nothing written"
    outcomes.append(ended(role, task, "skipped", "plan_rejected", why))
    return None


async def post_on_issue(runtime: Runtime, role: str, gate: Gate, what: str, text: str) -> None:
    """The gate's comment ``what`` on its issue, once, as ``role``'s bot."""
    from agents.planning.sources import role_identity

    repo, number, _ = gate.target
    identity = role_identity(runtime, role)
    async with runtime.discovery(identity, [repo], GATE_PERMISSIONS) as (gateway, login):
        if login is None:
            raise RuntimeError("the writer bot's login is not verified: its plan is not posted")
        bot = BotComments(runtime.store, gateway, login, holder=f"gate-{uuid.uuid4().hex[:12]}")
        await bot.once(repo, number, comment_key(gate, what), text)


def undecidable(gate: Gate | None) -> str | None:
    """Why a decision (``/swarm approve``, ``/swarm reject NOTE``) cannot resume the issue's
    gate, or None when its flow run waits for one."""
    if gate is None or gate.state in FINAL_STATES:
        return "no plan of the writer waits for a decision on this issue"
    if gate.state != "waiting":
        return "the writer is still planning: decide once its plan is posted"
    if gate.expired:
        return "the plan was not decided on in time; ask again with /swarm implement"
    return None


# -- a wait that ended without a decision -------------------------------------------------------

# What the next run does with a waiting gate: leave it, fail its suspended flow run and end it,
# or end it (its flow run is gone, or ended already).
Expiry = Literal["leave", "fail", "end"]


def expiry(gate: Gate, *, found: bool, paused: bool, final: bool) -> Expiry:
    """What becomes of a gate the store says waits, by its flow run's state: ``found`` (Prefect
    still has the run), ``paused`` (it still waits) and ``final`` (it ended). A resumed run is
    deciding now, and a paused one within its time may still be decided on: both are left; a
    paused one past its time is failed, and one gone or ended will never decide (a timeout
    runs none of its code)."""
    if not found or (final and not paused):
        return "end"
    if not paused:
        return "leave"
    return "fail" if gate.expired else "leave"


async def end_timed_out(runtime: Runtime, gate: Gate) -> None:
    """A gate whose wait ended without a decision: said on its issue once, its row
    ``timed_out``, and its run's row ends failed with the code ``plan_timed_out``."""
    *_, role = gate.target
    await post_on_issue(runtime, role, gate, "timed-out", timed_out_text(gate))
    gate.state = "timed_out"
    await save_gate(runtime.store, gate)
    await asyncio.to_thread(_end_run, runtime.store, gate)


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
