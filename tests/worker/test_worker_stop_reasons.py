"""Every stop reason the provider sends ends in a clear outcome or a continued session."""

from __future__ import annotations

import pytest

from agents.outcome import WorkerOutcome
from sandbox.github.seed import WIDGETS, WIDGETS_PR_DEBUG_PRINT
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio


async def _review(swarm: Swarm) -> WorkerOutcome:
    return await swarm.review(WIDGETS, WIDGETS_PR_DEBUG_PRINT)


async def test_pause_turn_is_resumed_and_the_review_still_goes_out(swarm: Swarm) -> None:
    swarm.scripted.force_stop("pause_turn")
    outcome = await _review(swarm)
    assert outcome.status == "succeeded", outcome.reason
    assert outcome.posted


async def test_one_max_tokens_stop_gets_one_continuation(swarm: Swarm) -> None:
    swarm.scripted.force_stop("max_tokens")
    outcome = await _review(swarm)
    assert outcome.status == "succeeded", outcome.reason
    assert outcome.posted


async def test_repeated_max_tokens_ends_the_worker_with_a_clear_reason(swarm: Swarm) -> None:
    swarm.scripted.force_stop("max_tokens", "max_tokens")
    outcome = await _review(swarm)
    assert outcome.status == "failed"
    assert outcome.reason == "the model's replies kept hitting the output limit"
    assert outcome.code == "output_limit"
    assert swarm.writes() == []


async def test_a_refusal_ends_the_worker_without_writing(swarm: Swarm) -> None:
    swarm.scripted.force_stop("refusal")
    outcome = await _review(swarm)
    assert outcome.status == "failed"
    assert outcome.reason == "the model refused the task"
    assert outcome.code == "refusal"
    assert swarm.writes() == []
    assert swarm.runtime.store.get_worker(outcome.worker_id).status == "failed"
