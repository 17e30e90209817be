"""The session loop over in-memory ports: tools, stop reasons, budgets, recall, the record."""

from __future__ import annotations

import asyncio
import pickle
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from agents.dispatch.envelope import Budgets
from agents.llm.prompt import PrefixBuilder
from agents.llm.turn import ToolResult
from agents.llm.usage import Usage
from agents.worker.budget import BudgetExhausted, Meter
from agents.worker.loop import CUT_OFF_NOTE, Session, SessionResult, run_session
from tests.worker.memory_ports import (
    MODEL,
    DictTools,
    ListRecorder,
    ReplayModel,
    reply,
    text,
    use,
)

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
TASK = "Review pull request acme/widgets#1 and submit one review."
TOOLS = [
    {"name": n, "description": f"{n} tool", "input_schema": {"type": "object"}}
    for n in ("get_pull", "submit_review")
]


class Chain:
    """An overlay chain with no overlays (the agent role lives in the prefix)."""

    def system_overlays(self) -> list[str]:
        return []

    def resolved_chain(self) -> list[str]:
        return ["reviewer"]


def _recalled(hits: Sequence[str]) -> Callable[[str], Awaitable[Sequence[str]]]:
    async def recall(_query: str) -> Sequence[str]:
        return list(hits)

    return recall


def _session(recall: Sequence[str] = (), identity: str = "You review pull requests.") -> Session:
    prefix = PrefixBuilder(identity).tools(TOOLS).session_timestamp(T0).build()
    return Session(
        prefix=prefix,
        chain=Chain(),
        model=MODEL,
        max_tokens=512,
        task=TASK,
        recall=_recalled(recall),
        clock=lambda: T0,
    )


async def _answer(args: Mapping[str, Any]) -> ToolResult:
    return ToolResult(f"answer to {dict(args)}", summary="answered")


def _run(
    model: ReplayModel,
    tools: DictTools | None = None,
    session: Session | None = None,
    budgets: Budgets | None = None,
) -> tuple[SessionResult, ListRecorder, Meter]:
    recorder = ListRecorder()
    meter = Meter(budgets or Budgets())
    tools = tools or DictTools({"get_pull": _answer, "submit_review": _answer})
    result = asyncio.run(run_session(model, tools, recorder, session or _session(), meter))
    return result, recorder, meter


def _user_blocks(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    return list(request["messages"][-1]["content"])


def test_tool_calls_run_in_order_and_their_results_go_back_by_id() -> None:
    model = ReplayModel(
        reply(use("get_pull", 1), use("submit_review", 2, body="ok")),
        text("Reviewed."),
    )
    tools = DictTools({"get_pull": _answer, "submit_review": _answer})
    result, _, meter = _run(model, tools)

    assert result == SessionResult("succeeded", text="Reviewed.")
    assert tools.calls == [("get_pull", {}), ("submit_review", {"body": "ok"})]
    blocks = _user_blocks(model.requests[1])
    assert [(b["type"], b.get("tool_use_id")) for b in blocks] == [
        ("tool_result", "toolu_1"),
        ("tool_result", "toolu_2"),
        ("text", None),
    ]
    assert blocks[1]["content"] == "answer to {'body': 'ok'}"
    assert meter.turns == 2


def test_every_turn_is_recorded_as_it_happens() -> None:
    _, recorder, _ = _run(ReplayModel(reply(use("get_pull")), text("done")))
    assert recorder.kinds() == ["user", "model", "tool_call", "tool_result", "user", "model"]
    first, second = recorder.model_turns()
    assert first.role_chain == ["reviewer"] and first.model == MODEL
    assert first.prefix_hash == second.prefix_hash == _session().prefix.sha256
    assert first.cost_usd > 0


def test_a_failed_tool_call_is_an_error_result_for_the_model_not_the_end() -> None:
    model = ReplayModel(reply(use("delete_repo")), text("I cannot do that."))
    result, recorder, _ = _run(model)
    assert result.status == "succeeded"
    [block] = [b for b in _user_blocks(model.requests[1]) if b["type"] == "tool_result"]
    assert block["is_error"] is True and "not available" in block["content"]
    _, (_, recorded) = recorder.events[3]
    assert recorded.is_error


def test_the_turn_context_carries_the_task_turn_and_budgets_left() -> None:
    model = ReplayModel(reply(use("get_pull")), text("done"))
    _run(model, budgets=Budgets(turns=5))
    first = _user_blocks(model.requests[0])[-1]["text"]
    second = _user_blocks(model.requests[1])[-1]["text"]
    assert first.startswith("<turn_context>\nturn: 1\ntime: 2026-11-29T12:00:00+00:00")
    assert f"task: {TASK}" in first and "turns=5" in first
    assert "turn: 2" in second and "turns=4" in second


def test_recall_follows_tool_results_and_never_opens_the_session() -> None:
    model = ReplayModel(reply(use("get_pull")), text("done"))
    _run(model, session=_session(recall=["maintainers prefer small PRs"]))
    assert "<recall>" not in _user_blocks(model.requests[0])[-1]["text"]
    assert (
        "<recall>\n- maintainers prefer small PRs\n</recall>"
        in (_user_blocks(model.requests[1])[-1]["text"])
    )


def test_a_paused_turn_is_sent_back_unchanged_to_resume() -> None:
    paused = reply({"type": "text", "text": "Let me look"}, stop="pause_turn")
    model = ReplayModel(paused, text("done"))
    result, recorder, _ = _run(model)
    assert result.status == "succeeded"
    resumed = model.requests[1]["messages"]
    assert resumed[-1]["role"] == "assistant"
    assert resumed[-1]["content"][0]["text"] == "Let me look"
    assert recorder.kinds().count("user") == 1


def test_one_cut_off_reply_gets_one_continuation_and_a_second_ends_the_session() -> None:
    cut = text("half a thou", stop="max_tokens")
    result, _, _ = _run(ReplayModel(cut, text("done")))
    assert result.status == "succeeded"

    model = ReplayModel(cut, cut)
    result, _, _ = _run(model)
    assert result == SessionResult(
        "failed", "the model's replies kept hitting the output limit", "half a thou", "output_limit"
    )
    assert CUT_OFF_NOTE.strip() in _user_blocks(model.requests[1])[-1]["text"]


def test_a_refusal_ends_the_session_as_refused() -> None:
    result, _, _ = _run(ReplayModel(text("No.", stop="refusal")))
    assert result == SessionResult("failed", "the model refused the task", "No.", "refusal")


@pytest.mark.parametrize(
    ("budgets", "message", "code"),
    [
        (Budgets(turns=2), "turn budget spent (2 of 2 turns)", "turns"),
        (
            Budgets(llm_tokens=200),
            "token budget spent (240 of 200 billed tokens; 240 raw)",
            "tokens",
        ),
        (Budgets(cost_usd=0.0001), "cost budget spent", "cost"),
    ],
)
def test_a_spent_budget_stops_the_loop_before_the_next_call_and_names_the_budget(
    budgets: Budgets, message: str, code: str
) -> None:
    forever = ReplayModel(*[reply(use("get_pull", n)) for n in range(10)])
    with pytest.raises(BudgetExhausted, match=message.replace("(", r"\(").replace(")", r"\)")) as e:
        _run(forever, budgets=budgets)
    assert len(forever.requests) <= 2
    assert e.value.code == code
    # Pickled whole, as a Prefect result or a process pool carries it: the code survives.
    assert pickle.loads(pickle.dumps(e.value)).code == code


def test_github_calls_counted_outside_the_loop_also_stop_it() -> None:
    meter = Meter(Budgets(github_calls=1))
    meter.count_github_call(graphql=False)
    with pytest.raises(BudgetExhausted, match="GitHub call budget spent"):
        asyncio.run(run_session(ReplayModel(), DictTools(), ListRecorder(), _session(), meter))


def test_the_token_budget_counts_cache_reads_and_writes_as_they_are_billed() -> None:
    # Each call rereads 50,000 cached tokens (billed at a tenth) and writes 1,000 (at 1.25x).
    rereads = Usage(
        input_tokens=100,
        cache_read_input_tokens=50_000,
        cache_creation_input_tokens=1_000,
        output_tokens=100,
    )
    calls = [reply(use("get_pull", n), usage=rereads) for n in range(6)]
    model = ReplayModel(*calls, reply({"type": "text", "text": "done"}, stop="end_turn"))
    result, recorder, meter = _run(model, budgets=Budgets(llm_tokens=100_000, turns=50))
    assert result.status == "succeeded"  # 306,000 raw tokens, under 100,000 billed
    assert meter.usage.total_tokens > 300_000
    billed = [t.billed_tokens for t in recorder.model_turns()]
    assert billed[:6] == [100 + 100 + 5_000 + 1_250] * 6
    assert meter.billed_tokens == sum(billed) < 100_000
    assert meter.used()["tokens"] == meter.usage.total_tokens
    assert meter.used()["billed_tokens"] == meter.billed_tokens


def test_a_later_call_that_neither_reads_nor_writes_the_cache_is_a_miss() -> None:
    cached = Usage(input_tokens=10, cache_read_input_tokens=5000, output_tokens=5)
    cold = Usage(input_tokens=5000, output_tokens=5)
    big = _session(identity="You review pull requests. " * 1200)
    model = ReplayModel(
        reply(use("get_pull", 1), usage=cold),
        reply(use("get_pull", 2), usage=cached),
        reply({"type": "text", "text": "done"}, stop="end_turn", usage=cold),
    )
    _, recorder, _ = _run(model, session=big)
    assert [t.cache_miss for t in recorder.model_turns()] == [False, False, True]
