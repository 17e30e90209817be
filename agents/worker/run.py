"""One worker, start to end: open the envelope -> verify the identity -> register -> the loop
-> outcome. The gateway is closed and the record finished whichever way it ends.

A worker never raises for a worker-level problem: a bad envelope or identity, a spent budget,
a paused identity, an overloaded model, a GitHub error or a bug all end in a ``WorkerOutcome``
(see ``ERROR_OUTCOMES``), with the transcript recorded up to that point.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING

from agents.dispatch.admission import Arrival, admit_envelope
from agents.dispatch.envelope import EnvelopeRejected, OpenedEnvelope, SealedEnvelope
from agents.github.errors import GitHubApiError, TokenRefused
from agents.identity.errors import IdentityBlocked, IdentityError
from agents.kinds import for_task
from agents.llm.client import LLMError
from agents.llm.context import ContextFull
from agents.llm.models import UnknownModel
from agents.memory.operational import AgentMemory
from agents.outcome import (
    EndCode,
    OutcomeStatus,
    WorkDone,
    WorkerOutcome,
    WorkRefused,
    WrittenWork,
)
from agents.posting.findings import Finding
from agents.posting.writer import ReviewWriter
from agents.ratelimit import Paused
from agents.redact import redact
from agents.roles import RoleChain, resolve_chain
from agents.tools import WorkerContext, build_toolbox
from agents.tools.pull_files import pull_view
from agents.transport import GitHubUnreachable
from agents.work import Spend
from agents.worker import story
from agents.worker.budget import BudgetExhausted, Meter
from agents.worker.deps import WorkerDeps
from agents.worker.loop import Session, SessionResult, run_session
from agents.worker.outline import pr_outline
from agents.worker.overlays import path_overlays
from agents.worker.prompt import build_prefix, describe_task
from agents.worker.record import StoreRecorder
from agents.worker.session_memory import recaller, starting_memory
from agents.worker.window import ContextWindow

if TYPE_CHECKING:
    from agents.github.gateway import GitHubGateway
    from agents.github.records import GitHubCallRecord
    from agents.tools.context import ThreadResolver

log = logging.getLogger("agents.worker")

CONTINUITY_CHARS = 2000
# Ids a malformed envelope's row may be recorded under (the store's own id alphabet).
_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")

# How each error ends a worker, first match wins. Anything else is a crash, logged with its
# traceback and recorded as failed.
ERROR_OUTCOMES: tuple[tuple[type[Exception], OutcomeStatus, Callable[[Exception], str]], ...] = (
    (EnvelopeRejected, "blocked", str),
    (WorkRefused, "failed", str),
    (IdentityBlocked, "blocked", str),
    (IdentityError, "failed", "identity check failed: {}".format),
    (BudgetExhausted, "budget_exhausted", str),
    (ContextFull, "failed", "context window full: {}".format),
    (UnknownModel, "failed", str),
    # A GitHub identity or a model key out of budget (429s, a 529 storm): nothing is wrong with
    # the work, a later run picks it up at `paused_until`.
    (Paused, "paused", str),
    (LLMError, "failed", "model error: {}".format),
    (GitHubApiError, "failed", "GitHub error: {}".format),
    (GitHubUnreachable, "failed", "GitHub error: {}".format),
    (TokenRefused, "failed", "GitHub error: {}".format),
)


# How a claim held or written already is told, by task kind (a review's words otherwise).
_DOING = {
    "respond": "answering this reply",
    "implement": "working on this issue",
    "fix": "fixing this pull request at this head",
}
_DONE = {
    "respond": "already answered",
    "implement": "the writer opened its pull request before",
    "fix": "a fix round answered this head before",
}


@dataclass
class _End:
    """How the worker ended, and what its tools did, before it is recorded and reported."""

    status: OutcomeStatus
    reason: str | None = None
    review_url: str | None = None
    code: EndCode | None = None
    posted: bool = False
    dry_run_preview: str | None = None
    findings: list[Finding] = field(default_factory=list)
    paused_until: datetime | None = None
    written: WrittenWork | None = None
    held_by: str | None = None
    finished_summary: str | None = None


def _end_of(exc: Exception) -> _End:
    for kind, status, reason in ERROR_OUTCOMES:
        if isinstance(exc, kind):
            paused = exc.until_datetime if isinstance(exc, Paused) else None
            return _End(status, reason(exc), code=_code_of(exc), paused_until=paused)
    log.exception("worker crashed")
    return _End("failed", f"worker crashed: {type(exc).__name__}: {exc}")


def _code_of(exc: Exception) -> EndCode | None:
    """The end code of an error that ends a worker short of its job, when it has one."""
    if isinstance(exc, BudgetExhausted):
        return exc.code
    return "context_full" if isinstance(exc, ContextFull) else None


def _end_of_session(result: SessionResult, ctx: WorkerContext) -> _End:
    review = ctx.review
    status, reason = result.status, result.reason
    left = ctx.bench.unfinished() if ctx.bench is not None else None
    if status == "succeeded" and left is not None:
        status, reason = "failed", left
    return _End(
        status,
        reason,
        code=result.code,
        review_url=review.url if review else None,
        posted=bool(review and not review.already_posted),
        dry_run_preview=ctx.preview,
        findings=list(ctx.findings),
        written=ctx.bench.written() if ctx.bench is not None else None,
    )


async def run_worker(arrived: Arrival, deps: WorkerDeps) -> WorkerOutcome:
    """Run one worker to its outcome. Never raises for worker-level problems, a malformed
    envelope included: that is BLOCKED before anything is recorded, opened or verified."""
    try:
        sealed = admit_envelope(arrived)
    except EnvelopeRejected as exc:
        return await _turned_away(arrived, deps, exc.message)
    env = sealed.envelope
    record = StoreRecorder(deps.store, env.worker_id)
    record.register(sealed, env.roles.ids())
    meter = Meter(env.budgets, registry=deps.registry)
    login = env.identity.expected_login
    log.info("worker %s starts: %s as %s", env.worker_id, env.task.label, env.roles.agent)
    try:
        opened = deps.opener.open(sealed)
        verified = await deps.verifier.verify(opened)
        login = verified.login
        record.verified(verified)
        gateway = _gateway(deps, opened, login, record, meter)
        try:
            # The wall-time budget also cuts a turn short that is stuck in a slow call.
            async with asyncio.timeout(meter.wall_seconds_left()):
                end = await _work(deps, opened, gateway, record, meter)
        except TimeoutError:
            raise meter.wall_time_spent() from None
        finally:
            await gateway.aclose()
    except Exception as exc:
        end = _end_of(exc)
    return await record.reported(_finish(sealed, record, meter, login, end))


async def _turned_away(arrived: object, deps: WorkerDeps, reason: str) -> WorkerOutcome:
    worker_id, run_id = _named(arrived)
    if worker_id is not None and run_id is not None:
        try:
            await StoreRecorder(deps.store, worker_id).turned_away(run_id, redact(reason))
        except Exception as exc:  # ids the store will not take: the outcome still says why
            log.warning("could not record the refusal of %s: %s", worker_id, type(exc).__name__)
    reason = redact(reason)  # a validator's message may quote the hostile input
    log.warning("worker %s: %s", worker_id or "-", reason)
    return WorkerOutcome(
        worker_id=worker_id or "-", role="-", target="-", status="blocked", reason=reason
    )


def _named(arrived: object) -> tuple[str | None, str | None]:
    """The worker and run a malformed envelope claims to be for, when they are plain ids."""
    env = (
        arrived.get("envelope")
        if isinstance(arrived, Mapping)
        else getattr(arrived, "envelope", None)
    )

    def plain(key: str) -> str | None:
        value = env.get(key) if isinstance(env, Mapping) else getattr(env, key, None)
        return value if isinstance(value, str) and _ID.fullmatch(value) else None

    return plain("worker_id"), plain("run_id")


def _gateway(
    deps: WorkerDeps, opened: OpenedEnvelope, login: str, record: StoreRecorder, meter: Meter
) -> GitHubGateway:
    credential = opened.credential
    assert credential is not None  # verification refuses an envelope without one

    def observe(call: GitHubCallRecord) -> None:
        meter.count_github_call(graphql=call.resource == "graphql")
        record.github_call(call)

    worker_id = opened.envelope.worker_id
    task = opened.envelope.task
    target = f"{task.repo}#{task.number}" if task.number is not None else None
    return deps.gateways(
        login, lambda: credential, worker_id=worker_id, on_call=observe, target=target
    )


def _resolver(deps: WorkerDeps, opened: OpenedEnvelope, login: str) -> ThreadResolver | None:
    """What resolves this worker's fixed findings' threads: never its own token (a reviewer's
    cannot, DESIGN rule 3), and nothing in a dry run or for a worker that may not write PRs."""
    env = opened.envelope
    if deps.resolvers is None or deps.dry_run:
        return None
    if env.identity.permissions.get("pull_requests") != "write":
        return None
    task = env.task
    target = f"{task.repo}#{task.number}" if task.number is not None else None
    return deps.resolvers(env.identity.name, login, worker_id=env.worker_id, target=target)


async def _work(
    deps: WorkerDeps,
    opened: OpenedEnvelope,
    gateway: GitHubGateway,
    record: StoreRecorder,
    meter: Meter,
) -> _End:
    env = opened.envelope
    task = env.task
    chain = resolve_chain(deps.roles, env.roles)
    agent = chain.agent
    memory = AgentMemory(
        deps.store,
        env.worker_id,
        run_id=env.run_id,
        repo=task.repo,
        role=agent.id,
        pr_number=task.number,
    )
    ctx = WorkerContext(
        worker_id=env.worker_id,
        run_id=env.run_id,
        role_id=agent.id,
        task=task,
        gateway=gateway,
        store=deps.store,
        memory=memory,
        permissions=dict(env.identity.permissions),
        dry_run=deps.dry_run,
        history_scope=agent.history_scope,
        bot_login=gateway.identity,
        spend=lambda: _spent(meter),
        resolve_threads=_resolver(deps, opened, gateway.identity),
    )
    if task.finishing and ctx.dry_run:
        # Only a summary is left, from the store's record: never a model session in its place.
        said = "reviewed at this head; a run that is not a dry run writes the summary it was left"
        return _End("skipped", said)
    writer = ReviewWriter(ctx)
    taken = await writer.claim()
    if taken is not None and taken.held_by is not None:
        doing = _DOING.get(task.kind, "reviewing this PR at this head")
        reason = f"another worker ({taken.held_by}) is {doing} now"
        return _End("skipped", reason, held_by=taken.held_by)
    if taken is not None:
        left = await writer.left()
        if left is not None:
            finished = await writer.finish(left, await pull_view(ctx))
            # An interrupted run posted the review and left the rest: done now, no model call.
            summary = finished.summary_url or "(another worker is writing it)"
            said = f"finished what an interrupted run left after its review: summary {summary}"
            return _End("succeeded", said, review_url=taken.url, finished_summary=summary)
        done = _DONE.get(task.kind, "already reviewed at this head SHA")
        return _End("skipped", done, review_url=taken.url)
    kind = for_task(task.kind)
    bench = kind.workbench(ctx) if kind is not None and kind.workbench is not None else None
    try:
        async with bench or contextlib.nullcontext():
            return await _session(deps, opened, record, meter, ctx, chain, memory)
    except WorkDone as done:
        return _End("skipped", str(done), review_url=done.url)


async def _session(
    deps: WorkerDeps,
    opened: OpenedEnvelope,
    record: StoreRecorder,
    meter: Meter,
    ctx: WorkerContext,
    chain: RoleChain,
    memory: AgentMemory,
) -> _End:
    """The model's session on ``ctx``, from its context window to its end."""
    env = opened.envelope
    task = env.task
    agent = chain.agent
    model_id = chain.model or deps.model_id
    spec = deps.registry.spec(model_id)
    max_tokens = min(agent.limits.max_output_tokens, spec.max_output_tokens)
    window = ContextWindow.for_model(
        spec, max_tokens, deps.calibrations[deps.registry.resolve(model_id)]
    )
    meter.context = window.record
    ctx.pages = window.policy
    toolbox = build_toolbox(ctx, chain.allowed_tools())
    start = await starting_memory(deps.store, memory, task.repo)
    snapshot = start.snapshot
    prefix = await build_prefix(
        agent, toolbox.schemas(), snapshot.text, ctx.guidance_files, tier=ctx.pages
    )
    record.session_start(prefix, snapshot, window.record())
    # The whole PR in outline, so no worker judges the PR from the part it reads.
    # The writer's branch as an earlier session left it, so a re-run continues its work.
    bench = ctx.bench.briefing() if ctx.bench is not None else ""
    briefing = "\n\n".join(part for part in (await pr_outline(ctx), bench, start.briefing) if part)
    session = Session(
        prefix=prefix,
        chain=chain,
        model=model_id,
        max_tokens=max_tokens,
        task=describe_task(task),
        recall=recaller(deps.store, memory, snapshot),
        memory_hash=snapshot.hash,
        window=window,
        briefing=briefing,
        chain_for=path_overlays(chain, deps.path_overlays) if deps.path_overlays else None,
    )
    result: SessionResult = await run_session(deps.model, toolbox, record, session, meter)
    if result.status == "succeeded" and result.text:
        # Through the writer: nothing waits for it, and it is in before the outcome is reported.
        deps.store.writer.write(
            env.worker_id, partial(memory.save_continuity, result.text[:CONTINUITY_CHARS])
        )
    return _end_of_session(result, ctx)


def _spent(meter: Meter) -> Spend:
    usage = meter.usage
    prompt = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    return Spend(
        cost_usd=meter.cost_usd,
        input_tokens=prompt,
        output_tokens=usage.output_tokens,
        model_calls=meter.turns,
    )


def _finish(
    sealed: SealedEnvelope, record: StoreRecorder, meter: Meter, login: str, end: _End
) -> WorkerOutcome:
    env = sealed.envelope
    reason = redact(end.reason) if end.reason else None
    usage = meter.usage
    outcome = WorkerOutcome(
        worker_id=env.worker_id,
        role=env.roles.agent,
        target=env.task.label,
        identity_login=login,
        status=end.status,
        reason=reason,
        code=end.code,
        github_calls=meter.github_calls,
        graphql_calls=meter.graphql_calls,
        llm_calls=meter.turns,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_input_tokens,
        cache_write_tokens=usage.cache_creation_input_tokens,
        cost_usd=round(meter.cost_usd, 6),
        turns=meter.turns,
        review_url=end.review_url,
        posted=end.posted,
        dry_run_preview=end.dry_run_preview,
        findings=end.findings,
        paused_until=end.paused_until,
        written=end.written,
        held_by=end.held_by,
        finished_summary=end.finished_summary,
    )
    record.finish(end.status, reason, meter.used())
    story.ended(outcome)
    return outcome
