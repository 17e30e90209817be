"""Rate-limit answers from the sandbox GitHub pause the identity; the pause is reported."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import httpx
import pytest

from agents.github import IdentityPaused
from agents.github.gateway import GitHubGateway
from sandbox.github.limits import RateLimits, Resource
from sandbox.github.seed import REVIEWER_BOT, REVIEWER_INSTALLATION_ID, WIDGETS
from sandbox.github.state import SandboxState
from sandbox.server import SandboxServer
from tests.github.sandbox_helpers import reviewer_gateway

pytestmark = pytest.mark.anyio


def _drain(server: SandboxServer, token: str, path: str, times: int, method: str = "GET") -> None:
    """Another client on the same token, bypassing the gateway (what a shared budget prevents)."""
    with httpx.Client(base_url=server.url, headers={"authorization": f"token {token}"}) as c:
        for _ in range(times):
            if method == "POST":
                c.post(path, json={"query": "query { viewer { login } }"})
            else:
                c.get(path)


def _reset(state: SandboxState, resource: Resource = "core") -> int:
    with state.lock:
        return state.limiter.status(REVIEWER_BOT, resource, state.clock.now()).reset


async def _two_reads_spend_the_rest_points(server: SandboxServer) -> GitHubGateway:
    """The reviewer's gateway after two reads: with 2 REST points a minute, the next is refused."""
    gateway = reviewer_gateway(server)
    await gateway.get_issue(WIDGETS, 4)
    await gateway.get_issue(WIDGETS, 4)
    return gateway


@pytest.mark.parametrize("status", [403, 429])
async def test_a_primary_limit_answer_pauses_until_the_reset_and_nothing_more_is_sent(
    make_sandbox: Callable[[SandboxState], SandboxServer], status: Literal[403, 429]
) -> None:
    state = SandboxState(limits=RateLimits(core=10))
    state.knobs.primary_limit_status = status
    server = make_sandbox(state)
    token = state.mint_token(REVIEWER_INSTALLATION_ID)
    gateway = reviewer_gateway(server, token=token)
    await gateway.get_issue(WIDGETS, 4)  # the gateway learns the budget: 9 left
    _drain(server, token, f"/repos/{WIDGETS}/issues/4", 9)
    with pytest.raises(IdentityPaused) as info:
        await gateway.get_issue(WIDGETS, 4)
    assert info.value.until == _reset(state)
    sent = len(state.requests_by(REVIEWER_BOT))
    with pytest.raises(IdentityPaused):
        await gateway.for_worker("another").get_pull(WIDGETS, 1)
    assert len(state.requests_by(REVIEWER_BOT)) == sent  # not retried, nothing new sent
    await gateway.aclose()


async def test_a_secondary_limit_without_retry_after_backs_off_a_minute(
    make_sandbox: Callable[[SandboxState], SandboxServer],
) -> None:
    state = SandboxState(limits=RateLimits(rest_points_per_window=2))
    state.knobs.secondary_retry_after = False
    gateway = await _two_reads_spend_the_rest_points(make_sandbox(state))
    before = state.clock.now()
    with pytest.raises(IdentityPaused) as info:
        await gateway.get_issue(WIDGETS, 4)
    assert before + 60 <= info.value.until <= state.clock.now() + 60
    assert "secondary rate limit (403) without retry-after or reset" in info.value.reason
    assert state.counter(REVIEWER_BOT).secondary_limited == 1
    await gateway.aclose()


async def test_a_secondary_limit_with_retry_after_is_honoured(
    make_sandbox: Callable[[SandboxState], SandboxServer],
) -> None:
    state = SandboxState(limits=RateLimits(rest_points_per_window=2))
    gateway = await _two_reads_spend_the_rest_points(make_sandbox(state))
    with pytest.raises(IdentityPaused) as info:
        await gateway.get_issue(WIDGETS, 4)
    assert "retry-after" in info.value.reason
    window_start = state.limiter.buckets(REVIEWER_BOT).rest_points.start
    assert window_start is not None
    window_end = window_start + 60
    assert info.value.until >= window_end - 1
    await gateway.aclose()


async def test_graphql_rate_limited_pauses_until_the_graphql_reset(
    make_sandbox: Callable[[SandboxState], SandboxServer],
) -> None:
    state = SandboxState(limits=RateLimits(graphql=1))
    server = make_sandbox(state)
    token = state.mint_token(REVIEWER_INSTALLATION_ID)
    gateway = reviewer_gateway(server, token=token)
    _drain(server, token, "/graphql", 1, method="POST")
    with pytest.raises(IdentityPaused) as info:
        await gateway.viewer_login()
    assert info.value.reason.startswith("GraphQL RATE_LIMITED")
    assert info.value.until == _reset(state, "graphql")
    await gateway.aclose()
