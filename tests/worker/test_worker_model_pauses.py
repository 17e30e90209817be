"""A model that will not answer for a while pauses the worker: a clear outcome, never a crash.

Through the real Anthropic SDK against the scripted model over loopback HTTP; the key's backoff
runs on a virtual clock, so a 529 storm's retries pass without waiting.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from agents.llm.client import LLMClient
from agents.ratelimit.anthropic.throttle import KeyMetering
from sandbox.github.seed import WIDGETS, WIDGETS_PR_DEBUG_PRINT
from sandbox.model import ScriptedModel, ScriptedServer
from tests.llm.clocks import VirtualClock
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio


def _storm(model: ScriptedModel) -> None:
    model.overload_for(3600)  # every call answered 529 for an hour


def _long_rate_limit(model: ScriptedModel) -> None:
    model.fail_next(times=1, status=429, retry_after_ms=3_600_000)  # "come back in an hour"


@pytest.mark.parametrize(
    ("trouble", "answers", "reason_has"),
    [
        (_storm, {529: 5}, "overloaded (HTTP 529)"),
        (_long_rate_limit, {429: 1}, "rate-limited this key (429)"),
    ],
    ids=["529-storm", "429-retry-after-an-hour"],
)
async def test_a_model_that_will_not_answer_pauses_the_worker_and_its_row_says_paused(
    swarm: Swarm,
    trouble: Callable[[ScriptedModel], None],
    answers: dict[int, int],
    reason_has: str,
) -> None:
    model = swarm.scripted
    clock = VirtualClock(start=datetime.now(UTC).timestamp())
    trouble(model)
    with ScriptedServer(model) as server:
        swarm.use_model(
            LLMClient(
                api_key="sk-ant-offline",
                base_url=server.url,
                metering=KeyMetering(clock=clock),
            )
        )
        outcome = await swarm.review(WIDGETS, WIDGETS_PR_DEBUG_PRINT)
    assert outcome.status == "paused", outcome.reason
    assert outcome.reason is not None and reason_has in outcome.reason
    assert outcome.reason.startswith("model calls paused until ")
    assert outcome.paused_until is not None
    assert outcome.paused_until.timestamp() > clock.now()  # a time a later run can wait for
    assert model.status_counts == answers  # the SDK's own retries are off: the throttle decides
    assert swarm.writes() == []
    events = swarm.runtime.store.get_transcript(outcome.worker_id)
    assert events[-1].kind == "status"
    assert events[-1].content["status"] == "paused"
    assert swarm.runtime.store.get_worker(outcome.worker_id).status == "paused"  # not "failed"
