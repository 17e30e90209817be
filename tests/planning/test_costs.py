"""The run's money: the estimate grows with the work and the prices, and the cost cap never
grants more than is left."""

from __future__ import annotations

import math

from agents.llm.models import ModelRegistry
from agents.planning.costs import CostCap, estimate_run, estimate_worker
from agents.work import Task

SONNET = ModelRegistry().spec("claude-sonnet-4-6")
OPUS = ModelRegistry().spec("claude-opus-4-1")


def _task(files: int) -> Task:
    paths = tuple(f"src/m{i}.py" for i in range(files))
    return Task(kind="review_pr", repo="acme/widgets", number=1, files=paths)


def test_a_bigger_pr_and_a_dearer_model_cost_more() -> None:
    small, big = estimate_worker(_task(1), SONNET), estimate_worker(_task(200), SONNET)
    assert big.calls > small.calls and big.tokens > small.tokens and big.cost_usd > small.cost_usd
    assert estimate_worker(_task(1), OPUS).cost_usd > small.cost_usd
    # Most of a session's input is read back from the cache.
    assert big.cache_read_tokens > big.cache_write_tokens > big.input_tokens


def test_the_run_estimate_adds_its_workers_and_names_the_model() -> None:
    total, each = estimate_run(2, [_task(1), _task(3)], SONNET, "claude-sonnet-4-6")
    assert total.prs == 2 and total.workers == 2
    assert math.isclose(total.cost_usd, sum(e.cost_usd for e in each.values()))
    assert total.line().startswith("estimate: 2 PR(s), 2 worker(s), about ")
    assert total.line().endswith("on claude-sonnet-4-6 at current prices")


def test_no_cap_grants_the_whole_role_budget() -> None:
    cap = CostCap(None)
    assert cap.grant("w1", 2.0, 0.1) == 2.0 and cap.left_out == []


def test_the_cap_grants_only_what_is_left_and_leaves_out_what_does_not_fit() -> None:
    cap = CostCap(1.0)
    assert cap.grant("w1", 0.6, 0.1) == 0.6
    assert cap.grant("w2", 0.6, 0.1) == 0.4  # held 0.6: only 0.4 is left
    assert cap.grant("w3", 0.6, 0.1) is None and cap.left_out == ["w3"]
    cap.settle("w1", 0.05)  # w1 spent little: its hold comes back
    assert math.isclose(cap.left, 1.0 - 0.05 - 0.4)
    assert cap.grant("w4", 2.0, 0.1) is not None
    assert "cost cap $1.00 would be passed" in cap.reason()


def test_less_than_one_workers_expected_cost_left_starts_nothing() -> None:
    cap = CostCap(0.05)
    assert cap.grant("w1", 2.0, 0.06) is None
    assert cap.spent == 0.0 and cap.held == {}
