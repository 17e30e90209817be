"""Each kind of rate-limit answer pauses the whole identity for the right time, never less."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest
import respx

from agents.github import IdentityPaused, IdentityThrottle, ThrottleLimits
from agents.github.gateway import GitHubGateway
from tests.github.helpers import BASE, BOT, GRAPHQL, ManualClock, ok, rl_headers

pytestmark = pytest.mark.anyio

SECONDARY = {"message": "You have exceeded a secondary rate limit. Please wait a few minutes."}


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def gateway(clock: ManualClock) -> GitHubGateway:
    throttle = IdentityThrottle(BOT, limits=ThrottleLimits(max_inline_wait=30), clock=clock)
    return GitHubGateway(BASE, BOT, lambda: "ghs_pausetest", throttle)


@pytest.fixture
def mock() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=BASE, assert_all_called=False) as router:
        yield router


def answer_in_turn(
    clock: ManualClock, times: list[float], *responses: httpx.Response
) -> Callable[[httpx.Request], httpx.Response]:
    queue = list(responses)

    def respond(request: httpx.Request) -> httpx.Response:
        times.append(clock.now())
        return queue.pop(0)

    return respond


@pytest.mark.parametrize(
    ("limited", "wait"),
    [
        (httpx.Response(403, json=SECONDARY, headers={"retry-after": "20"}), 20),
        (httpx.Response(429, headers={"retry-after": "5"}), 5),
    ],
    ids=["secondary-403", "429"],
)
async def test_a_rate_limit_with_retry_after_is_waited_out_then_retried_once(
    gateway: GitHubGateway,
    clock: ManualClock,
    mock: respx.MockRouter,
    limited: httpx.Response,
    wait: float,
) -> None:
    times: list[float] = []
    t0 = clock.now()
    mock.get("/repos/o/r/pulls/1").mock(
        side_effect=answer_in_turn(clock, times, limited, ok({"n": 1}))
    )
    assert await gateway.get_pull("o/r", 1) == {"n": 1}
    assert times == [t0, t0 + wait]


async def test_secondary_limit_without_headers_pauses_60s_and_is_reported_not_slept(
    gateway: GitHubGateway, clock: ManualClock, mock: respx.MockRouter
) -> None:
    route = mock.get("/repos/o/r/pulls/1").mock(return_value=httpx.Response(403, json=SECONDARY))
    t0 = clock.now()
    with pytest.raises(IdentityPaused) as info:
        await gateway.get_pull("o/r", 1)
    assert (info.value.identity, info.value.until) == (BOT, t0 + 60)
    assert "secondary rate limit (403) without retry-after or reset: backing off 60 s" in str(
        info.value
    )
    assert clock.sleeps == []
    assert route.call_count == 1


async def test_repeated_headerless_limits_back_off_exponentially(
    gateway: GitHubGateway, clock: ManualClock, mock: respx.MockRouter
) -> None:
    mock.get("/repos/o/r/pulls/1").mock(return_value=httpx.Response(403, json=SECONDARY))
    with pytest.raises(IdentityPaused):
        await gateway.get_pull("o/r", 1)
    clock.t += 61
    with pytest.raises(IdentityPaused) as info:
        await gateway.get_pull("o/r", 1)
    assert info.value.until == clock.now() + 120


async def test_a_paused_identity_sends_nothing_for_any_worker_or_resource(
    gateway: GitHubGateway, clock: ManualClock, mock: respx.MockRouter
) -> None:
    mock.get("/repos/o/r/pulls/1").mock(return_value=httpx.Response(403, json=SECONDARY))
    graphql = mock.post(GRAPHQL).mock(return_value=ok({"data": {"viewer": {"login": BOT}}}))
    with pytest.raises(IdentityPaused):
        await gateway.for_worker("w1").get_pull("o/r", 1)
    with pytest.raises(IdentityPaused):
        await gateway.for_worker("w2").viewer_login()
    assert graphql.call_count == 0
    clock.t += 60
    assert await gateway.for_worker("w2").viewer_login() == BOT


async def test_primary_limit_403_pauses_until_the_reset(
    gateway: GitHubGateway, clock: ManualClock, mock: respx.MockRouter
) -> None:
    reset = clock.now() + 600
    route = mock.get("/repos/o/r/pulls/1").mock(
        return_value=httpx.Response(
            403, json={"message": "API rate limit exceeded"}, headers=rl_headers(0, reset=reset)
        )
    )
    with pytest.raises(IdentityPaused) as info:
        await gateway.get_pull("o/r", 1)
    assert info.value.until == reset
    assert "core budget exhausted until the reset" in info.value.reason
    assert route.call_count == 1


async def test_a_near_primary_reset_is_slept_and_the_retry_comes_after_it(
    gateway: GitHubGateway, clock: ManualClock, mock: respx.MockRouter
) -> None:
    times: list[float] = []
    reset = clock.now() + 10
    mock.get("/repos/o/r/pulls/1").mock(
        side_effect=answer_in_turn(
            clock,
            times,
            httpx.Response(
                403, json={"message": "API rate limit exceeded"}, headers=rl_headers(0, reset=reset)
            ),
            ok({"n": 1}, remaining=4999, reset=reset + 3600),
        )
    )
    await gateway.get_pull("o/r", 1)
    assert len(times) == 2 and times[1] >= reset


async def test_429_without_headers_backs_off_at_least_a_minute(
    gateway: GitHubGateway, clock: ManualClock, mock: respx.MockRouter
) -> None:
    mock.get("/repos/o/r/issues/2").mock(return_value=httpx.Response(429))
    with pytest.raises(IdentityPaused) as info:
        await gateway.get_issue("o/r", 2)
    assert info.value.until == clock.now() + 60
    assert "429 Too Many Requests" in info.value.reason


async def test_graphql_rate_limited_error_in_a_200_pauses_until_the_graphql_reset(
    gateway: GitHubGateway, clock: ManualClock, mock: respx.MockRouter
) -> None:
    reset = clock.now() + 900
    route = mock.post(GRAPHQL).mock(
        return_value=httpx.Response(
            200,
            json={"errors": [{"type": "RATE_LIMITED", "message": "API rate limit exceeded"}]},
            headers=rl_headers(0, reset=reset, resource="graphql"),
        )
    )
    with pytest.raises(IdentityPaused) as info:
        await gateway.viewer_login()
    assert info.value.until == reset
    assert info.value.reason.startswith("GraphQL RATE_LIMITED")
    assert route.call_count == 1
    snapshot = await gateway.snapshot()
    assert snapshot.paused_until is not None and snapshot.paused_until.timestamp() == reset
    assert snapshot.rate_limited_responses == 1


async def test_a_forbidden_answer_that_is_no_rate_limit_is_an_error_not_a_pause(
    gateway: GitHubGateway, mock: respx.MockRouter
) -> None:
    from agents.github import GitHubApiError

    mock.get("/repos/o/r/pulls/1").mock(
        return_value=httpx.Response(403, json={"message": "Resource not accessible by integration"})
    )
    with pytest.raises(GitHubApiError) as info:
        await gateway.get_pull("o/r", 1)
    assert str(info.value) == (
        "GitHub GET /repos/{owner}/{repo}/pulls/{pull_number} failed with 403: "
        "Resource not accessible by integration"
    )
    assert (await gateway.snapshot()).paused_until is None
