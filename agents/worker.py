"""The worker: open envelope, verify identity, loop {assemble, LLM, tools, record}, outcome.

A worker never raises for a worker-level problem: a bad envelope or identity, a spent budget, a
paused identity, an overloaded model, a GitHub error or a bug all end in a ``WorkerOutcome`` the
parent flow can show, with the transcript recorded up to that point.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from agents.envelope import EnvelopeRejected, OpenedEnvelope, SealedEnvelope, TaskRef, envelope_hash
from agents.identity.errors import IdentityBlocked, IdentityError
from agents.llm.client import LLMError, LLMOverloaded
from agents.llm.prompt import CachedPrefix, PrefixBuilder
from agents.llm.request import build_request
from agents.llm.turn import ToolResult as TurnToolResult
from agents.llm.turn import TurnContext, assistant_message, user_message
from agents.llm.untrusted import wrap_untrusted
from agents.llm.usage import Usage, cost, is_cache_miss
from agents.memory.operational import AgentMemory
from agents.memory.snapshot import frozen_snapshot
from agents.outcome import WorkerOutcome, WorkerStatus
from agents.redact import redact
from agents.tools import WorkerContext, build_toolbox

if TYPE_CHECKING:
    from agents.github.gateway import GitHubGateway
    from agents.github.records import GitHubCallRecord
    from agents.wiring import Runtime

log = logging.getLogger("agents.worker")

CONTEXT_FILES = ("AGENTS.md", "CONTRIBUTING.md")
PREVIEW_CHARS = 160
# Store statuses for outcomes the store has no word of its own for.
_STORE_STATUS: dict[str, str] = {"skipped": "succeeded", "paused": "failed"}


Finish = Callable[..., WorkerOutcome]


class BudgetExhausted(Exception):
    pass


@dataclass
class _Tally:
    """Running totals of one worker, for budgets and the outcome."""

    started: float = field(default_factory=time.monotonic)
    turns: int = 0
    llm_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    github_calls: int = 0
    graphql_calls: int = 0

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def used(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "llm_calls": self.llm_calls,
            "tokens": self.usage.total_tokens,
            "cost_usd": round(self.cost_usd, 6),
            "github_calls": self.github_calls,
            "wall_seconds": round(time.monotonic() - self.started, 3),
        }


def describe_task(task: TaskRef) -> str:
    """The trusted task line of ``<turn_context>``: dispatcher facts, untrusted text quoted."""
    target = f"{task.repo}#{task.number}"
    sha = f" at head {task.head_sha}" if task.head_sha else ""
    if task.kind == "triage_issue":
        return f"Triage issue {target}: add fitting labels and post one helpful comment."
    if task.kind == "summarize":
        findings = wrap_untrusted("reviewer_findings", task.brief or "(no findings)")
        return (
            f"Summarize the partial reviews of pull request {target}{sha} into one review and "
            f"submit it. Reviewer findings (path:line: message):\n{findings}"
        )
    text = f"Review pull request {target}{sha} and submit one review."
    if task.since_sha:
        text += f" Only the changes since the previously reviewed commit {task.since_sha} matter."
    if task.files and task.shard_count:
        part = (task.shard_index or 0) + 1
        text += (
            f" This worker covers part {part} of {task.shard_count}: only the files "
            f"{', '.join(task.files)}; its findings are merged by another worker."
        )
    return text


async def run_worker(sealed: SealedEnvelope, runtime: Runtime) -> WorkerOutcome:
    """Run one worker to its outcome. Never raises for worker-level problems."""
    env = sealed.envelope
    chain_ids = [r for r in (env.roles.call, env.roles.session, env.roles.agent) if r]
    store = runtime.store
    worker_id = env.worker_id
    _register(runtime, sealed, chain_ids)
    tally = _Tally()
    base = {"worker_id": worker_id, "role": env.roles.agent, "target": env.task.label()}

    def finish(status: WorkerStatus, reason: str | None = None, **extra: Any) -> WorkerOutcome:
        safe_reason = redact(reason) if reason else None
        outcome = WorkerOutcome(
            **base,
            identity_login=extra.pop("identity_login", env.identity.expected_login),
            status=status,
            reason=safe_reason,
            github_calls=tally.github_calls,
            graphql_calls=tally.graphql_calls,
            llm_calls=tally.llm_calls,
            input_tokens=tally.usage.input_tokens,
            output_tokens=tally.usage.output_tokens,
            cache_read_tokens=tally.usage.cache_read_input_tokens,
            cache_write_tokens=tally.usage.cache_creation_input_tokens,
            cost_usd=round(tally.cost_usd, 6),
            turns=tally.turns,
            **extra,
        )
        store.append_event(
            worker_id, "status", {"status": status, "reason": safe_reason or "", **tally.used()}
        )
        store.finish_worker(
            worker_id,
            _STORE_STATUS.get(status, status),
            blocked_reason=safe_reason,
            budgets_used=tally.used(),
        )
        log.info("worker %s %s: %s %s", worker_id, env.task.label(), status, safe_reason or "")
        return outcome

    try:
        opened = runtime.sealer.open(sealed)
    except EnvelopeRejected as exc:
        return finish("blocked", exc.message)
    try:
        verified = await asyncio.to_thread(runtime.verifier.verify, opened)
    except IdentityBlocked as exc:
        return finish("blocked", str(exc))
    except IdentityError as exc:
        return finish("failed", f"identity check failed: {exc}")
    store.update_worker(worker_id, identity_login=verified.login)
    store.append_event(
        worker_id,
        "status",
        {
            "status": "verified",
            "login": verified.login,
            "credential_id": verified.token_fingerprint,
        },
    )
    gateway = _gateway(runtime, opened, verified.login, worker_id, tally)
    try:
        # The wall-time budget also cuts a turn short that is stuck in a slow call.
        async with asyncio.timeout(max(0.0, env.budgets.wall_seconds - tally.elapsed())):
            return await _session(runtime, opened, gateway, tally, finish, verified.login)
    except TimeoutError:
        spent = (
            f"wall-time budget spent ({tally.elapsed():.0f} s of {env.budgets.wall_seconds:.0f} s)"
        )
        return finish("budget_exhausted", spent, identity_login=verified.login)
    except BudgetExhausted as exc:
        return finish("budget_exhausted", str(exc), identity_login=verified.login)
    except LLMOverloaded as exc:
        return finish("failed", f"model overloaded: {exc}", identity_login=verified.login)
    except LLMError as exc:
        return finish("failed", f"model error: {exc}", identity_login=verified.login)
    except Exception as exc:
        return _github_or_crash(exc, finish, verified.login)
    finally:
        await gateway.aclose()


def _github_or_crash(exc: Exception, finish: Finish, login: str) -> WorkerOutcome:
    from agents.github.errors import GitHubApiError, GitHubUnavailable, IdentityPaused

    if isinstance(exc, IdentityPaused):
        outcome: WorkerOutcome = finish(
            "paused", str(exc), identity_login=login, paused_until=exc.until_datetime
        )
        return outcome
    if isinstance(exc, GitHubApiError | GitHubUnavailable):
        outcome = finish("failed", f"GitHub error: {exc}", identity_login=login)
        return outcome
    log.exception("worker crashed")
    outcome = finish("failed", f"worker crashed: {type(exc).__name__}: {exc}", identity_login=login)
    return outcome


def _register(runtime: Runtime, sealed: SealedEnvelope, chain_ids: list[str]) -> None:
    env = sealed.envelope
    mint = env.identity.mint
    fields: dict[str, Any] = {
        "role_chain": chain_ids,
        "task": env.task.model_dump(mode="json"),
        "identity_login": env.identity.expected_login,
        "envelope_id": env.envelope_id,
        "envelope_hash": envelope_hash(sealed),
        "token_fingerprint": mint.token_fingerprint if mint else None,
    }
    from agents.store.base import UnknownWorkerError

    try:
        runtime.store.get_worker(env.worker_id)
    except UnknownWorkerError:
        runtime.store.create_worker(env.run_id, worker_id=env.worker_id, status="running", **fields)
        return
    # A retried task: same worker id, a fresh attempt.
    runtime.store.update_worker(env.worker_id, status="running")


def _gateway(
    runtime: Runtime, opened: OpenedEnvelope, login: str, worker_id: str, tally: _Tally
) -> GitHubGateway:
    credential = opened.credential
    assert credential is not None

    def observe(record: GitHubCallRecord) -> None:
        tally.github_calls += 1
        if record.resource == "graphql":
            tally.graphql_calls += 1
        runtime.store.record_github_call(
            identity=record.identity,
            worker_id=record.worker_id,
            method=record.method,
            route=record.route,
            target=record.target,
            status=record.status,
            ratelimit_remaining=record.rate_limit_remaining,
            resource=record.resource,
            latency_ms=int(record.duration_ms),
        )

    return runtime.gateway(login, lambda: credential, worker_id=worker_id, on_call=observe)


async def _session(
    runtime: Runtime,
    opened: OpenedEnvelope,
    gateway: GitHubGateway,
    tally: _Tally,
    finish: Finish,
    login: str,
) -> WorkerOutcome:
    env = opened.envelope
    task = env.task
    store = runtime.store
    chain = runtime.dispatcher.chain(env.roles.agent, env.roles.session, env.roles.call)
    agent = chain.agent
    memory = AgentMemory(store, env.worker_id, run_id=env.run_id, repo=task.repo, role=agent.id)
    ctx = WorkerContext(
        worker_id=env.worker_id,
        run_id=env.run_id,
        role_id=agent.id,
        task=task,
        gateway=gateway,
        store=store,
        memory=memory,
        permissions=dict(env.identity.permissions),
        dry_run=runtime.dry_run,
        history_scope=agent.history_scope,
    )
    skipped = _already_reviewed(ctx)
    if skipped is not None:
        return finish(
            "skipped",
            "already reviewed at this head SHA",
            identity_login=login,
            review_url=skipped,
        )
    toolbox = build_toolbox(ctx, chain.allowed_tools())
    snapshot = frozen_snapshot(store, task.repo, agent.id)
    prefix = await _prefix(
        agent.render("agent", with_skills=False), toolbox.schemas(), snapshot.text, agent, ctx
    )
    store.record_prompt_prefix(prefix.sha256, prefix.text)
    store.append_event(
        env.worker_id,
        "status",
        {"status": "session_start", "prefix_hash": prefix.sha256, "fragments": prefix.manifest()},
    )
    model = chain.model or runtime.model_id
    budgets = env.budgets
    task_text = describe_task(task)
    messages: list[dict[str, Any]] = [
        user_message(TurnContext(task_text, _left(budgets, tally), datetime.now(UTC), turn=1))
    ]
    _record_user(store, env.worker_id, messages[-1])
    continuations = 0
    final_text = ""
    while True:
        _check_budgets(budgets, tally)
        request = build_request(
            prefix, chain, messages, model=model, max_tokens=agent.limits.max_output_tokens
        )
        result = await runtime.llm.create(request)
        tally.turns += 1
        tally.llm_calls += 1
        tally.usage = tally.usage + result.usage
        call_cost = cost(result.usage, result.model or model)
        tally.cost_usd += call_cost
        miss = tally.llm_calls > 1 and is_cache_miss(result.usage, prefix.approx_tokens)
        store.record_llm_call(
            worker_id=env.worker_id,
            model=result.model or model,
            prefix_hash=prefix.sha256,
            role_chain=chain.resolved_chain(),
            input_tokens=result.usage.input_tokens,
            cache_read_tokens=result.usage.cache_read_input_tokens,
            cache_write_tokens=result.usage.cache_creation_input_tokens,
            output_tokens=result.usage.output_tokens,
            cost=call_cost,
            latency_ms=int(result.latency_s * 1000),
            stop_reason=result.stop_reason,
            cache_miss=miss,
        )
        store.append_event(
            env.worker_id,
            "assistant_turn",
            {"content": result.content, "stop_reason": result.stop_reason},
            tokens=result.usage.total_tokens,
            cost=call_cost,
        )
        messages.append(assistant_message(result.content))
        stop = result.stop_reason
        if stop == "tool_use":
            results = await _run_tools(ctx, toolbox, result.tool_uses)
            recall = _recall(ctx, snapshot.memory_ids, task_text)
            context = TurnContext(
                task_text, _left(budgets, tally), datetime.now(UTC), tally.turns + 1
            )
            messages.append(user_message(context, tool_results=results, recall=recall))
            _record_user(store, env.worker_id, messages[-1])
            continue
        if stop == "pause_turn":
            # The provider paused a long turn: send the conversation back as it is to resume.
            continue
        if stop == "max_tokens" and continuations < 1:
            continuations += 1
            context = TurnContext(
                task_text + " Your last reply was cut off at the output limit: finish briefly.",
                _left(budgets, tally),
                datetime.now(UTC),
                tally.turns + 1,
            )
            messages.append(user_message(context))
            _record_user(store, env.worker_id, messages[-1])
            continue
        final_text = result.text
        if stop == "max_tokens":
            return finish(
                "failed",
                "the model's replies kept hitting the output limit",
                identity_login=login,
                **_results(ctx),
            )
        if stop == "refusal":
            return finish(
                "failed", "the model refused the task", identity_login=login, **_results(ctx)
            )
        break
    if final_text:
        memory.save_continuity(final_text[:2000])
    return finish("succeeded", None, identity_login=login, **_results(ctx))


def _results(ctx: WorkerContext) -> dict[str, Any]:
    review = ctx.review
    return {
        "review_url": review.url if review else None,
        "posted": bool(review and not review.already_posted),
        "dry_run_preview": ctx.preview,
        "findings": [
            {"path": str(f["path"]), "line": int(f["line"]), "body": str(f["body"])}
            for f in ctx.findings
        ],
    }


def _already_reviewed(ctx: WorkerContext) -> str | None:
    """The posted review's URL when this (PR, head SHA, role) was reviewed before."""
    task = ctx.task
    if task.kind not in ("review_pr", "summarize") or ctx.is_shard or ctx.dry_run:
        return None
    if task.number is None or task.head_sha is None:
        return None
    from agents.store.reviews import review_key

    known = ctx.store.get_review_key(review_key(task.repo, task.number, task.head_sha, ctx.role_id))
    if known is not None and known.state == "posted":
        return known.review_url or ""
    return None


async def _prefix(
    identity_text: str,
    tool_specs: list[dict[str, Any]],
    memory_text: str,
    agent: Any,
    ctx: WorkerContext,
) -> CachedPrefix:
    builder = PrefixBuilder(identity_text).tools(tool_specs).memory_snapshot(memory_text)
    builder.skills([(s.name, s.description) for s in agent.skills])
    for name in CONTEXT_FILES:
        text = await _context_file(ctx, name)
        if text:
            builder.context_file(name, text)
    builder.session_timestamp(datetime.now(UTC))
    return builder.build()


async def _context_file(ctx: WorkerContext, name: str) -> str | None:
    from agents.github.errors import GitHubApiError

    if not ctx.may("contents", "read"):
        return None
    try:
        text = await ctx.gateway.get_file(ctx.task.repo, name, ctx.task.head_sha)
    except GitHubApiError as exc:
        if exc.status in (404, 403):
            return None
        raise
    return text[:8000]


async def _run_tools(
    ctx: WorkerContext, toolbox: Any, uses: list[dict[str, Any]]
) -> list[TurnToolResult]:
    results: list[TurnToolResult] = []
    for use in uses:
        name = str(use.get("name"))
        args = use.get("input") or {}
        ctx.store.append_event(
            ctx.worker_id, "tool_call", {"tool": name, "input": args, "id": use.get("id")}
        )
        result = await toolbox.call(name, args)
        ctx.store.append_event(
            ctx.worker_id,
            "tool_result",
            {
                "tool": name,
                "id": use.get("id"),
                "is_error": result.is_error,
                "size": len(result.content),
                "summary": result.summary,
                "preview": result.content[:PREVIEW_CHARS],
            },
        )
        results.append(TurnToolResult(str(use.get("id")), result.content, result.is_error))
    return results


def _recall(ctx: WorkerContext, frozen_ids: tuple[int, ...], query: str) -> list[str]:
    """Memory written after the session started (the snapshot already holds the rest)."""
    frozen = {f"memory:{i}" for i in frozen_ids}
    hits = ctx.memory.recall(query, limit=3)
    return [h.text for h in hits if h.source not in frozen and h.kind != "note"]


def _left(budgets: Any, tally: _Tally) -> dict[str, int | float | str]:
    return {
        "turns": budgets.turns - tally.turns,
        "tokens": budgets.llm_tokens - tally.usage.total_tokens,
        "cost_usd": round(budgets.cost_usd - tally.cost_usd, 4),
        "github_calls": budgets.github_calls - tally.github_calls,
        "seconds": round(budgets.wall_seconds - (time.monotonic() - tally.started), 1),
    }


def _check_budgets(budgets: Any, tally: _Tally) -> None:
    if tally.turns >= budgets.turns:
        raise BudgetExhausted(f"turn budget spent ({tally.turns} of {budgets.turns} turns)")
    if tally.usage.total_tokens >= budgets.llm_tokens:
        raise BudgetExhausted(
            f"token budget spent ({tally.usage.total_tokens} of {budgets.llm_tokens} tokens)"
        )
    if tally.cost_usd >= budgets.cost_usd:
        raise BudgetExhausted(
            f"cost budget spent (${tally.cost_usd:.4f} of ${budgets.cost_usd:.2f})"
        )
    if tally.github_calls >= budgets.github_calls:
        raise BudgetExhausted(
            f"GitHub call budget spent ({tally.github_calls} of {budgets.github_calls} calls)"
        )
    elapsed = time.monotonic() - tally.started
    if elapsed >= budgets.wall_seconds:
        raise BudgetExhausted(
            f"wall-time budget spent ({elapsed:.0f} s of {budgets.wall_seconds:.0f} s)"
        )


def _record_user(store: Any, worker_id: str, message: dict[str, Any]) -> None:
    content = message.get("content")
    texts: list[str] = []
    results: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        if block.get("type") == "text":
            texts.append(str(block.get("text")))
        elif block.get("type") == "tool_result":
            body = str(block.get("content"))
            results.append({"id": block.get("tool_use_id"), "size": len(body)})
    store.append_event(worker_id, "user_turn", {"text": "\n".join(texts), "tool_results": results})
