"""Every budget ends the worker with a clear outcome and a complete record, never a crash."""

from __future__ import annotations

import pytest

from sandbox.github.seed import WIDGETS, WIDGETS_PR_DEBUG_PRINT
from tests.worker.conftest import Swarm
from tests.worker.fake_models import ReplayModel, forever, message, tool_use

pytestmark = pytest.mark.anyio


def _looping_model() -> ReplayModel:
    # A model that never stops reading: only a budget ends it.
    return ReplayModel(forever(lambda i: message([tool_use("get_pull", {}, i)])))


def _with_budgets(swarm: Swarm, **budgets: float) -> None:
    role = swarm.runtime.roles["reviewer"]
    limits = role.limits.model_copy(update=budgets)
    swarm.runtime.roles["reviewer"] = role.model_copy(update={"limits": limits})


@pytest.mark.parametrize(
    ("budget", "value", "message_start"),
    [
        ("max_turns", 3, "turn budget spent (3 of 3 turns)"),
        ("max_github_calls", 2, "GitHub call budget spent"),
        ("max_tokens", 300, "token budget spent"),
        ("max_cost_usd", 0.001, "cost budget spent"),
        ("max_wall_seconds", 0.001, "wall-time budget spent"),
    ],
)
async def test_each_budget_ends_the_worker_with_a_clear_outcome(
    swarm: Swarm, budget: str, value: float, message_start: str
) -> None:
    _with_budgets(swarm, **{budget: value})
    swarm.use_model(_looping_model().client())
    outcome = await swarm.review(WIDGETS, WIDGETS_PR_DEBUG_PRINT)
    assert outcome.status == "budget_exhausted"
    assert outcome.reason is not None and outcome.reason.startswith(message_start)
    record = swarm.runtime.store.get_worker(outcome.worker_id)
    assert record.status == "budget_exhausted"
    events = swarm.runtime.store.get_transcript(outcome.worker_id)
    assert events[-1].kind == "status"
    assert events[-1].content["status"] == "budget_exhausted"
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert swarm.writes() == []


async def test_github_5xx_on_reads_is_an_error_result_for_the_model_not_a_crash(
    swarm: Swarm,
) -> None:
    swarm.sandbox.state.inject_failure(
        "/repos/{owner}/{repo}/pulls/{pull_number}", status=502, count=50
    )
    for throttle in [swarm.runtime.throttle("swarm-reviewer[bot]")]:
        object.__setattr__(
            throttle,
            "limits",
            throttle.limits.model_copy(
                update={"transient_backoff_initial": 0.01, "transient_backoff_max": 0.02}
            ),
        )
    outcome = await swarm.review(WIDGETS, WIDGETS_PR_DEBUG_PRINT)
    # GitHub's outage on one read is the model's to work around (issue 10, class 7).
    assert outcome.status == "succeeded", outcome.reason
    errors = [
        block
        for request in swarm.scripted.requests
        for block in request["messages"][-1]["content"]
        if block.get("type") == "tool_result" and block.get("is_error")
    ]
    assert errors and "502" in str(errors[0]["content"])


async def test_wall_time_budget_cuts_a_slow_model_call_short(swarm: Swarm) -> None:
    _with_budgets(swarm, max_wall_seconds=1.5)
    swarm.scripted.latency_s = 5.0
    outcome = await swarm.review(WIDGETS, WIDGETS_PR_DEBUG_PRINT)
    assert outcome.status == "budget_exhausted"
    assert outcome.reason is not None and outcome.reason.startswith("wall-time budget spent")
    assert swarm.runtime.store.get_worker(outcome.worker_id).status == "budget_exhausted"
