"""The context budget: tiers by window, page sizes held to the budget, stubbing older results."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agents.llm.compaction import STUB_PREFIX, Stubs, compact, history_tokens
from agents.llm.context import ContextBudget, ContextFull, Tier, tier_for
from agents.llm.request import build_request
from agents.llm.turn import TurnContext, user_message
from agents.roles import Role, RoleChain
from tests.json_access import objs
from tests.json_access import text as as_text
from tests.llm.harness import T0, build_prefix

CPT = 4.0  # characters per token in these tests


def test_tiers_follow_the_window_size() -> None:
    assert tier_for(32_000).tier is Tier.SMALL
    assert tier_for(200_000).tier is Tier.MEDIUM
    assert tier_for(1_000_000).tier is Tier.LARGE
    assert not tier_for(32_000).skills_index and tier_for(200_000).skills_index


def test_the_budget_leaves_room_for_the_answer_and_a_margin() -> None:
    budget = ContextBudget.for_window(200_000, 4096)
    assert budget.limit == 200_000 - 4096 - 4000
    assert budget.high_water < budget.limit and budget.low_water < budget.high_water


def test_pages_are_held_to_a_share_of_a_small_budget() -> None:
    budget = ContextBudget.for_window(16_000, 2_000)
    policy = budget.policy(CPT)
    assert policy.tier is Tier.SMALL
    # 20% of 13,680 tokens at 4 characters each: 10,944 characters.
    assert policy.file_page_chars == 8_000 and policy.patch_page_chars == 3_000
    tiny = ContextBudget.for_window(8_000, 1_000).policy(CPT)
    assert tiny.file_page_chars == int((8_000 - 1_000 - 256) * 0.2 * CPT)


def test_an_output_cap_that_leaves_no_room_for_the_prompt_is_refused() -> None:
    with pytest.raises(ValueError, match="lower the role's max_output_tokens"):
        ContextBudget.for_window(16_000, 14_000)


def _history(turns: int, result_chars: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Review acme/app#1"}]
    for n in range(turns):
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": f"t{n}", "name": "read_file", "input": {"page": n}}
                ],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"t{n}", "content": "x" * result_chars},
                    {"type": "text", "text": f"turn {n}"},
                ],
            }
        )
    return messages


BUDGET = ContextBudget(window=10_000, max_output=1_000, margin=200)  # limit 8,800 tokens


def test_under_high_water_nothing_is_stubbed() -> None:
    messages = _history(3, 4_000)
    stubs = Stubs()
    assert compact(messages, stubs, fixed_tokens=500, chars_per_token=CPT, budget=BUDGET) is stubs


def test_over_high_water_older_turns_are_stubbed_down_to_low_water_in_one_step() -> None:
    messages = _history(8, 4_000)  # ~8,000 tokens of results
    stubs = compact(messages, Stubs(), fixed_tokens=500, chars_per_token=CPT, budget=BUDGET)
    rendered = stubs.apply(messages)
    total = 500 + history_tokens(rendered, CPT)
    assert total <= BUDGET.low_water
    stubbed = [f"t{n}" for n in range(8) if f"t{n}" in stubs.replaced]
    assert stubbed == [f"t{n}" for n in range(len(stubbed))]  # oldest first, no gaps
    assert "t6" not in stubs.replaced and "t7" not in stubs.replaced  # the newest stay whole
    assert stubs.boundary == 2 * len(stubbed)  # the user message of the last stubbed turn
    text = as_text(objs(rendered[2]["content"])[0]["content"])
    assert text.startswith(STUB_PREFIX)
    assert 'read_file {"page": 0} returned 4,000 characters' in text
    assert "Call read_file again with the same arguments" in text


def test_stubs_are_sticky_so_the_history_before_the_boundary_stays_byte_identical() -> None:
    messages = _history(8, 4_000)
    first = compact(messages, Stubs(), fixed_tokens=500, chars_per_token=CPT, budget=BUDGET)
    assert first.boundary is not None
    before = json.dumps(first.apply(messages)[: first.boundary + 1])
    messages += _history(3, 4_000)[1:]  # three more turns (ids t0..t2 reused as new calls)
    for n, message in enumerate(messages[17:]):
        for block in message["content"]:
            key = "id" if block["type"] == "tool_use" else "tool_use_id"
            if key in block:
                block[key] = f"late{n // 2}"
    second = compact(messages, first, fixed_tokens=500, chars_per_token=CPT, budget=BUDGET)
    assert second.compactions == 2 and second.boundary is not None
    assert second.boundary > first.boundary
    assert json.dumps(second.apply(messages)[: first.boundary + 1]) == before


def test_a_history_that_cannot_fit_even_stubbed_is_a_clear_error() -> None:
    messages = _history(3, 20_000)  # the two newest turns alone are over the budget
    with pytest.raises(ContextFull, match=r"over the 8800-token budget of a 10000-token window"):
        compact(messages, Stubs(), fixed_tokens=500, chars_per_token=CPT, budget=BUDGET)


def test_the_stub_boundary_carries_its_own_cache_breakpoint(roles: dict[str, Role]) -> None:
    prefix = build_prefix(roles["reviewer"])
    messages = [user_message(TurnContext("Review acme/app#1", {}, T0, 1)), *_history(3, 10)[1:]]
    request = build_request(
        prefix,
        RoleChain(roles["reviewer"]),
        messages,
        model="claude-sonnet-4-6",
        max_tokens=100,
        history_breakpoint=2,
    )
    marked = [
        i
        for i, m in enumerate(objs(request["messages"]))
        for b in objs(m["content"])
        if "cache_control" in b
    ]
    assert marked == [2, len(messages) - 1]
    system_marks = sum("cache_control" in b for b in objs(request["system"]))
    assert system_marks + len(marked) <= 4
