"""One worker's record in the store: its row, its transcript, its LLM and GitHub calls.

``StoreRecorder`` is the loop's ``Recorder`` port over the store, plus the steps ``run`` records
around the loop (registration, verification, session start, the end). What it writes is
redacted by the store; tool payloads are kept as size, summary and a short preview only.
Every write goes through the store's writer thread (:mod:`agents.store.writer`), in order, so
the flow's event loop never waits on SQL; ``flushed`` waits until all of them are in the store.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, ParamSpec

from agents.dispatch.envelope import SealedEnvelope, envelope_hash
from agents.json_value import JSONValue
from agents.llm.prompt import CachedPrefix
from agents.llm.turn import ToolResult
from agents.memory.snapshot import MemorySnapshot
from agents.outcome import OutcomeStatus, WorkerOutcome
from agents.redact import redact
from agents.store.base import UnknownWorkerError
from agents.store.records import GitHubCall, LlmCall, NewEvent, NewWorker, WorkerUpdate
from agents.worker import story
from agents.worker.ports import ModelTurn, ToolUse

if TYPE_CHECKING:
    from agents.github.records import GitHubCallRecord
    from agents.identity.verify import VerifiedIdentity
    from agents.store.store import Store

log = logging.getLogger("agents.worker")

PREVIEW_CHARS = 160
P = ParamSpec("P")


class StoreRecorder:
    """Also tells the worker's story in the log (:mod:`agents.worker.story`) as it records."""

    def __init__(self, store: Store, worker_id: str) -> None:
        self.store = store
        self.worker_id = worker_id
        self.model_calls = 0

    async def reported(self, outcome: WorkerOutcome) -> WorkerOutcome:
        """``outcome`` once every write of this record is in the store; a worker whose record
        could not be written has failed, whatever it did."""
        try:
            await self.store.writer.aflush(self.worker_id)
        except Exception as exc:
            log.warning("worker %s: its record could not be written", self.worker_id)
            reason = f"its record could not be written: {type(exc).__name__}: {redact(str(exc))}"
            return outcome.model_copy(update={"status": "failed", "reason": reason})
        return outcome

    def _write(self, write: Callable[P, object], /, *args: P.args, **kwargs: P.kwargs) -> None:
        self.store.writer.write(self.worker_id, partial(write, *args, **kwargs))

    def _event(
        self, kind: str, content: Mapping[str, JSONValue], tokens: int = 0, cost: float = 0.0
    ) -> None:
        self.store.writer.append(self.worker_id, NewEvent(kind, dict(content), tokens, cost))

    # -- around the loop ----------------------------------------------------------------------

    def register(self, sealed: SealedEnvelope, role_chain: list[str]) -> None:
        """The worker's row, created on its first attempt and reset to running on a retry."""
        self._write(self._register, sealed, role_chain)

    def _register(self, sealed: SealedEnvelope, role_chain: list[str]) -> None:
        env = sealed.envelope
        try:
            self.store.get_worker(self.worker_id)
        except UnknownWorkerError:
            mint = env.identity.mint
            self.store.create_worker(
                NewWorker(
                    env.run_id,
                    worker_id=self.worker_id,
                    status="running",
                    role_chain=role_chain,
                    task=env.task.model_dump(mode="json"),
                    identity_login=env.identity.expected_login,
                    envelope_id=env.envelope_id,
                    envelope_hash=envelope_hash(sealed),
                    token_fingerprint=mint.token_fingerprint if mint else None,
                )
            )
            return
        self.store.update_worker(self.worker_id, WorkerUpdate(status="running"))

    async def turned_away(self, run_id: str, reason: str) -> None:
        """A malformed envelope named this worker: its row says BLOCKED and why. A row of
        another run, or one already ended, is not this envelope's to change. Written before
        it returns (the caller reports the refusal at once)."""
        self._write(self._turned_away, run_id, reason)
        await self.store.writer.aflush(self.worker_id)

    def _turned_away(self, run_id: str, reason: str) -> None:
        try:
            row = self.store.get_worker(self.worker_id)
        except UnknownWorkerError:
            self.store.create_worker(NewWorker(run_id, worker_id=self.worker_id, role_chain=[]))
        else:
            if row.run_id != run_id or row.status not in ("pending", "running"):
                return
        # On the writer's thread already: written directly, in this order.
        self.store.append_event(self.worker_id, "status", {"status": "blocked", "reason": reason})
        self.store.finish_worker(self.worker_id, "blocked", blocked_reason=reason, budgets_used={})

    def verified(self, identity: VerifiedIdentity) -> None:
        login = identity.login
        self._write(self.store.update_worker, self.worker_id, WorkerUpdate(identity_login=login))
        self._status(
            {"status": "verified", "login": login, "credential_id": identity.token_fingerprint}
        )
        story.verified(identity)

    def session_start(
        self,
        prefix: CachedPrefix,
        snapshot: MemorySnapshot,
        context: Mapping[str, int | str] | None = None,
    ) -> None:
        """The prefix (by hash), the frozen memory, and the context tier the session runs in."""
        self._write(self.store.record_prompt_prefix, prefix.sha256, prefix.text)
        self._status(
            {
                "status": "session_start",
                "prefix_hash": prefix.sha256,
                "fragments": [*prefix.manifest()],
                "memory": {
                    "hash": snapshot.hash,
                    "memory_ids": list(snapshot.memory_ids),
                    "continuity_note": snapshot.continuity_id,
                },
                **(context or {}),
            }
        )

    def github_call(self, record: GitHubCallRecord) -> None:
        call = GitHubCall(
            identity=record.identity,
            worker_id=record.worker_id,
            method=record.method,
            route=record.route,
            target=record.target,
            status=record.status,
            ratelimit_remaining=record.rate_limit_remaining,
            resource=record.resource,
            latency_ms=int(record.duration_ms),
            # A GraphQL query is a POST that writes nothing: the audit log of mutations goes by
            # what the request does, not by its method.
            mutation=record.is_write,
        )
        self._write(self.store.record_github_call, call)

    def finish(
        self, status: OutcomeStatus, reason: str | None, used: Mapping[str, int | float | str]
    ) -> None:
        self._status({"status": status, "reason": reason or "", **used})
        self._write(
            self.store.finish_worker,
            self.worker_id,
            status,
            blocked_reason=reason,
            budgets_used=used,
        )

    def _status(self, content: Mapping[str, JSONValue]) -> None:
        self._event("status", content)

    # -- the Recorder port --------------------------------------------------------------------

    def user_turn(self, message: Mapping[str, object]) -> None:
        content = message.get("content")
        texts: list[str] = []
        results: list[JSONValue] = []
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "text":
                texts.append(str(block.get("text")))
            elif block.get("type") == "tool_result":
                body = str(block.get("content"))
                results.append({"id": block.get("tool_use_id"), "size": len(body)})
        self._event("user_turn", {"text": "\n".join(texts), "tool_results": results})

    def model_turn(self, turn: ModelTurn) -> None:
        result, usage = turn.result, turn.result.usage
        call = LlmCall(
            worker_id=self.worker_id,
            model=turn.model,
            prefix_hash=turn.prefix_hash,
            role_chain=turn.role_chain,
            input_tokens=usage.input_tokens,
            cache_read_tokens=usage.cache_read_input_tokens,
            cache_write_tokens=usage.cache_creation_input_tokens,
            output_tokens=usage.output_tokens,
            cost=turn.cost_usd,
            latency_ms=int(result.latency_s * 1000),
            stop_reason=result.stop_reason,
            cache_miss=turn.cache_miss,
            memory_hash=turn.memory_hash,
        )
        self._write(self.store.record_llm_call, call)
        self._event(
            "assistant_turn",
            {
                "content": [*result.content],
                "stop_reason": result.stop_reason,
                # Raw counters as the provider reported them, and the budget's billed figure.
                "usage": {**usage.as_dict(), "billed_tokens": turn.billed_tokens},
            },
            tokens=usage.total_tokens,
            cost=turn.cost_usd,
        )
        self.model_calls += 1
        story.model_call(turn, self.model_calls)

    def tool_call(self, use: ToolUse) -> None:
        self._event("tool_call", {"tool": use.name, "input": use.args, "id": use.id})

    def tool_result(self, use: ToolUse, result: ToolResult) -> None:
        self._event(
            "tool_result",
            {
                "tool": use.name,
                "id": use.id,
                "is_error": result.is_error,
                "size": len(result.content),
                "summary": result.summary,
                "preview": result.content[:PREVIEW_CHARS],
            },
        )
        story.tool_called(use, result)
