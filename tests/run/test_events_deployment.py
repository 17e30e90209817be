"""Event work on a deployment: ``run_deployment(timeout=0, idempotency_key=...)`` creates one flow
run per key, visible in the Prefect API with the event's target as its parameters."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, cast
from uuid import UUID

import pytest

from agents.events.routing import EventWork
from flows.run.request import RunRequest
from flows.webhook.enqueue import DeploymentEnqueuer
from flows.webhook.sink import flow_request

pytestmark = pytest.mark.prefect


def test_the_same_key_gets_the_same_flow_run_and_parameters_reach_it(
    prefect_harness: None,
) -> None:
    from prefect.client.orchestration import get_client

    from flows.run.flow import swarm_run

    work = EventWork(
        kind="review",
        repo="acme/widgets",
        number=3,
        role="reviewer",
        sender="alice-dev",
        head_sha="a" * 40,
    )

    async def scenario() -> tuple[str, str, str, Any]:
        # The deployment's own request: its fields stay under what each event asks.
        deployment = await swarm_run.ato_deployment(
            name="swarm-events-test",
            parameters=RunRequest(max_workers=3, model="scripted").parameters(),
        )
        await cast("Awaitable[Any]", deployment.apply())
        enqueuer = DeploymentEnqueuer("swarm-run/swarm-events-test")
        key = work.work_key("delivery-1")
        first = await enqueuer.enqueue(flow_request(work, "delivery-1"), key)
        again = await enqueuer.enqueue(flow_request(work, "delivery-2"), key)
        other = await enqueuer.enqueue(flow_request(work, "d-3"), "review:other")
        async with get_client() as client:
            run = await client.read_flow_run(UUID(first))
        return first, again, other, run

    first, again, other, run = asyncio.run(scenario())
    assert first == again != other
    # What the event asked over the deployment's request; the default role is left out.
    assert run.parameters == {
        "request": {"targets": ["acme/widgets#3"], "max_workers": 3, "model": "scripted"}
    }
    assert run.idempotency_key == f"review:acme/widgets#3@{'a' * 40}:reviewer"
