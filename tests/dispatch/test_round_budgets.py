"""A task's caps cover all its workers: a fix round gets what the earlier rounds left."""

from __future__ import annotations

from agents.dispatch.dispatcher import remaining
from agents.dispatch.envelope import Budgets
from agents.work import Spend


def test_a_later_round_gets_the_caps_minus_what_earlier_rounds_spent() -> None:
    caps = Budgets(turns=30, cost_usd=3.0, llm_tokens=600_000)

    left = remaining(caps, Spend(cost_usd=1.25, model_calls=12))

    assert (left.turns, left.cost_usd, left.llm_tokens) == (18, 1.75, 600_000)


def test_spent_beyond_the_caps_leaves_nothing_never_less() -> None:
    left = remaining(Budgets(turns=5, cost_usd=1.0), Spend(cost_usd=2.0, model_calls=9))

    assert (left.turns, left.cost_usd) == (0, 0.0)


def test_a_first_worker_gets_the_whole_caps() -> None:
    caps = Budgets(turns=30, cost_usd=3.0)
    assert remaining(caps, Spend()) is caps
