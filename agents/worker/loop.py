"""The session loop: ask the model, run the tools it asks for, repeat until it is done.

Only ports come in (model, tools, recorder) with plain session data; what comes out is how the
session ended. Budgets are checked before every call; model, GitHub and budget errors propagate
to ``agents.worker.run``, which maps each to an outcome. Every turn is recorded as it happens,
so a session that ends early still leaves its transcript.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from agents.json_value import JSONObject, JSONValue
from agents.llm.prompt import CachedPrefix
from agents.llm.request import OverlayChain, build_request
from agents.llm.turn import ToolResult, TurnContext, assistant_message, user_message
from agents.llm.usage import is_cache_miss
from agents.outcome import EndCode, OutcomeStatus
from agents.worker.budget import Meter
from agents.worker.ports import Model, ModelTurn, Recorder, Tools, ToolUse
from agents.worker.window import ContextWindow

CUT_OFF_NOTE = " Your last reply was cut off at the output limit: finish briefly."
# Why a session the model ended without finishing fails its worker, by stop reason.
UNFINISHED: dict[str, tuple[str, EndCode]] = {
    "max_tokens": ("the model's replies kept hitting the output limit", "output_limit"),
    "refusal": ("the model refused the task", "refusal"),
}


async def _no_recall(_query: str) -> Sequence[str]:
    return ()


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Session:
    """What one session asks of the model: plain data, no clients."""

    prefix: CachedPrefix
    chain: OverlayChain
    model: str
    max_tokens: int
    # The trusted task line of every ``<turn_context>``.
    task: str
    # Memory written since the session started, for the turn after tool results (awaited: it
    # reads the store, which must not hold up the other workers on the event loop).
    recall: Callable[[str], Awaitable[Sequence[str]]] = field(default=_no_recall)
    # The frozen memory snapshot's hash, recorded with every call beside the prefix hash.
    memory_hash: str | None = None
    # The chain of each call, from the history so far (call overlays); None: always ``chain``.
    chain_for: Callable[[Sequence[Mapping[str, object]]], OverlayChain] | None = None
    # Quoted material for the first turn only (learnings from reviewed feedback), already
    # delimited as untrusted by the caller; it stays in the history, never in the system.
    briefing: str = ""
    clock: Callable[[], datetime] = field(default=_now)
    # The model's context budget; every request is held within it (None: no window check,
    # for loop tests whose fake models have no window).
    window: ContextWindow | None = None


@dataclass(frozen=True)
class SessionResult:
    """How the model ended the session, in the outcome's words, and its last words."""

    status: OutcomeStatus
    reason: str | None = None
    text: str = ""
    code: EndCode | None = None


async def run_session(
    model: Model, tools: Tools, recorder: Recorder, session: Session, meter: Meter
) -> SessionResult:
    """Talk to the model until it stops asking for tools (or a budget or error ends it)."""
    messages: list[JSONObject] = []

    def say(
        task: str,
        tool_results: Sequence[tuple[str, ToolResult]] = (),
        recall: Sequence[str] = (),
        briefing: str = "",
    ) -> None:
        context = TurnContext(task, meter.left(), session.clock(), meter.turns + 1)
        messages.append(
            user_message(context, tool_results=tool_results, recall=recall, briefing=briefing)
        )
        recorder.user_turn(messages[-1])

    # The chain of the call being built (call overlays change it from call to call).
    chain: OverlayChain = session.chain

    def build(
        history: Sequence[Mapping[str, JSONValue]], breakpoint: int | None
    ) -> Mapping[str, object]:
        return build_request(
            session.prefix,
            chain,
            history,
            model=session.model,
            max_tokens=session.max_tokens,
            history_breakpoint=breakpoint,
        )

    say(session.task, briefing=session.briefing)
    continued = False
    while True:
        meter.check()
        chain = session.chain_for(messages) if session.chain_for else session.chain
        window = session.window
        request = window.request(messages, build) if window else build(messages, None)
        result = await model.create(request)
        first = meter.turns == 0
        cost_usd, billed = meter.charge(result, session.model)
        recorder.model_turn(
            ModelTurn(
                result=result,
                model=result.model or session.model,
                prefix_hash=session.prefix.sha256,
                role_chain=chain.resolved_chain(),
                cost_usd=cost_usd,
                cache_miss=not first and is_cache_miss(result.usage, session.prefix.approx_tokens),
                memory_hash=session.memory_hash,
                billed_tokens=billed,
            )
        )
        messages.append(assistant_message(result.content))
        stop = result.stop_reason
        if stop == "tool_use":
            uses = [ToolUse.from_block(block) for block in result.tool_uses]
            results = await _call_tools(tools, recorder, uses)
            closing = [r.closing for _, r in results if r.closing is not None and not r.is_error]
            if closing:
                return SessionResult("succeeded", text="\n".join([result.text, *closing]).strip())
            say(session.task, results, await session.recall(session.task))
        elif stop == "pause_turn":
            # The provider paused a long turn: send the conversation back as it is to resume.
            continue
        elif stop == "max_tokens" and not continued:
            continued = True
            say(session.task + CUT_OFF_NOTE)
        elif stop in UNFINISHED:
            said, code = UNFINISHED[stop]
            return SessionResult("failed", said, result.text, code)
        else:
            return SessionResult("succeeded", text=result.text)


async def _call_tools(
    tools: Tools, recorder: Recorder, uses: Sequence[ToolUse]
) -> list[tuple[str, ToolResult]]:
    """Each tool call in order; a failed call is an error result the model reads, not a crash."""
    results: list[tuple[str, ToolResult]] = []
    for use in uses:
        recorder.tool_call(use)
        result = await tools.call(use.name, use.args)
        recorder.tool_result(use, result)
        results.append((use.id, result))
    return results
