"""The gateway against a respx GitHub: auth per call, no shared cache, retries, audit records."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import httpx
import pytest
import respx

from agents.github import (
    GitHubApiError,
    GitHubCallRecord,
    GitHubUnreachable,
    GraphQLNotAllowed,
    IdentityThrottle,
    ThrottleLimits,
    TokenRefused,
)
from agents.github.gateway import GatewayRun, GitHubGateway
from tests.github.helpers import BASE, BOT, GRAPHQL, ManualClock, ok, rl_headers

pytestmark = pytest.mark.anyio


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def records() -> list[GitHubCallRecord]:
    return []


@pytest.fixture
def gateway(clock: ManualClock, records: list[GitHubCallRecord]) -> GitHubGateway:
    throttle = IdentityThrottle(BOT, limits=ThrottleLimits(), clock=clock)
    return GitHubGateway(
        BASE, BOT, lambda: "ghs_gatewaytest", throttle, run=GatewayRun(on_call=records.append)
    )


@pytest.fixture
def mock() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=BASE, assert_all_called=False) as router:
        yield router


async def test_each_call_reads_the_current_token_so_a_reminted_token_is_used(
    clock: ManualClock, mock: respx.MockRouter
) -> None:
    tokens = iter(["ghs_first", "ghs_second"])
    gateway = GitHubGateway(BASE, BOT, lambda: next(tokens), IdentityThrottle(BOT, clock=clock))
    route = mock.get("/repos/o/r/pulls/1").mock(return_value=ok({"n": 1}))
    await gateway.get_pull("o/r", 1)
    await gateway.get_pull("o/r", 1)
    assert [c.request.headers["authorization"] for c in route.calls] == [
        "token ghs_first",
        "token ghs_second",
    ]


async def test_no_token_fails_loud_and_sends_nothing(
    clock: ManualClock, mock: respx.MockRouter
) -> None:
    gateway = GitHubGateway(BASE, BOT, lambda: "", IdentityThrottle(BOT, clock=clock))
    route = mock.get("/repos/o/r/pulls/1").mock(return_value=ok({}))
    with pytest.raises(TokenRefused, match=r"no token for identity swarm-reviewer\[bot\]"):
        await gateway.get_pull("o/r", 1)
    assert route.call_count == 0


async def test_two_identities_never_share_a_cached_answer(
    clock: ManualClock, mock: respx.MockRouter
) -> None:
    def by_token(request: httpx.Request) -> httpx.Response:
        who = request.headers["authorization"].split("_")[-1]
        return httpx.Response(200, json={"title": who}, headers={"etag": '"same"'})

    route = mock.get("/repos/o/r/pulls/1").mock(side_effect=by_token)
    one = GitHubGateway(
        BASE, "one[bot]", lambda: "ghs_one", IdentityThrottle("one[bot]", clock=clock)
    )
    two = GitHubGateway(
        BASE, "two[bot]", lambda: "ghs_two", IdentityThrottle("two[bot]", clock=clock)
    )
    assert (await one.get_pull("o/r", 1))["title"] == "one"
    assert (await two.get_pull("o/r", 1))["title"] == "two"
    assert all("if-none-match" not in c.request.headers for c in route.calls)


async def test_reads_retry_server_errors_with_backoff(
    gateway: GitHubGateway, clock: ManualClock, mock: respx.MockRouter
) -> None:
    route = mock.get("/repos/o/r/pulls/1").mock(
        side_effect=[httpx.Response(502), httpx.Response(503), ok({"n": 1})]
    )
    assert await gateway.get_pull("o/r", 1) == {"n": 1}
    assert route.call_count == 3
    assert len(clock.sleeps) == 2 and 1 <= clock.sleeps[0] <= 2 and 2 <= clock.sleeps[1] <= 3


async def test_a_review_is_not_reposted_after_a_server_error_unless_safe(
    gateway: GitHubGateway, mock: respx.MockRouter
) -> None:
    route = mock.post("/repos/o/r/pulls/1/reviews").mock(
        side_effect=[httpx.Response(502, json={"message": "Bad Gateway"}), ok({"id": 9})]
    )
    with pytest.raises(GitHubApiError) as info:
        await gateway.create_review("o/r", 1, "looks fine")
    assert info.value.status == 502
    assert route.call_count == 1
    assert await gateway.create_review("o/r", 1, "looks fine", safe_to_retry=True) == {"id": 9}


async def test_timeouts_on_reads_retry_then_report_github_unreachable(
    gateway: GitHubGateway, mock: respx.MockRouter, records: list[GitHubCallRecord]
) -> None:
    route = mock.get("/repos/o/r/pulls/1").mock(side_effect=httpx.ConnectTimeout("slow"))
    with pytest.raises(
        GitHubUnreachable,
        match=r"GitHub GET /repos/\{owner\}/\{repo\}/pulls/\{pull_number\}: timed out",
    ):
        await gateway.get_pull("o/r", 1)
    assert route.call_count == 4
    assert [r.error for r in records] == ["timed out"] * 4
    assert (await gateway.snapshot()).in_flight == 0


async def test_every_call_is_recorded_by_route_without_the_token(
    gateway: GitHubGateway, mock: respx.MockRouter, records: list[GitHubCallRecord]
) -> None:
    mock.post("/repos/o/r/issues/5/comments").mock(return_value=ok({"id": 1}, remaining=4321))
    await gateway.for_worker("reviewer-1").create_issue_comment("o/r", 5, "hello")
    (record,) = records
    assert record.identity == BOT and record.worker_id == "reviewer-1"
    assert record.route == "/repos/{owner}/{repo}/issues/{issue_number}/comments"
    assert record.target == "/repos/o/r/issues/5/comments"
    assert (record.status, record.is_write, record.is_content_creation) == (200, True, True)
    assert (record.resource, record.cost, record.rate_limit_remaining) == ("core", 5, 4321)
    assert "ghs_" not in record.model_dump_json()


async def test_get_file_returns_text_from_raw_or_base64_answers(
    gateway: GitHubGateway, mock: respx.MockRouter
) -> None:
    raw = mock.get("/repos/o/r/contents/src/a.py", params={"ref": "abc"}).mock(
        # GitHub's label for a raw file: the media type asked for, "+json" and all.
        return_value=httpx.Response(
            200,
            text="print('hi')\n",
            headers={"content-type": "application/vnd.github.raw+json; charset=utf-8"},
        )
    )
    assert await gateway.get_file("o/r", "src/a.py", "abc") == "print('hi')\n"
    assert raw.calls.last.request.headers["accept"] == "application/vnd.github.raw+json"
    encoded = base64.b64encode(b"x = 1\n").decode()
    mock.get("/repos/o/r/contents/b.py").mock(
        return_value=httpx.Response(200, json={"encoding": "base64", "content": encoded})
    )
    assert await gateway.get_file("o/r", "b.py") == "x = 1\n"


async def test_pull_files_are_read_page_by_page(
    gateway: GitHubGateway, mock: respx.MockRouter
) -> None:
    page1 = [{"filename": f"f{i}"} for i in range(100)]
    page2 = [{"filename": "last"}]
    next_link = {"link": f'<{BASE}/repos/o/r/pulls/1/files?page=2>; rel="next"'}
    mock.get("/repos/o/r/pulls/1/files", params={"page": "1"}).mock(
        return_value=httpx.Response(200, json=page1, headers=next_link)
    )
    mock.get("/repos/o/r/pulls/1/files", params={"page": "2"}).mock(
        return_value=httpx.Response(200, json=page2)
    )
    files = await gateway.list_pull_files("o/r", 1)
    assert len(files) == 101 and files[-1]["filename"] == "last"


async def test_graphql_outside_the_allow_list_is_refused_before_sending(
    gateway: GitHubGateway, mock: respx.MockRouter
) -> None:
    route = mock.post(GRAPHQL).mock(return_value=ok({"data": {}}))
    with pytest.raises(
        GraphQLNotAllowed, match=r"use GET /repos/\{owner\}/\{repo\}/pulls/\{pull_number\}"
    ):
        await gateway.graphql(
            '{ repository(owner: "o", name: "r") { pullRequest(number: 1) { id } } }'
        )
    assert route.call_count == 0


async def test_graphql_records_the_exact_cost_and_feeds_the_graphql_bucket(
    gateway: GitHubGateway,
    clock: ManualClock,
    mock: respx.MockRouter,
    records: list[GitHubCallRecord],
) -> None:
    reset = clock.now() + 3600
    mock.post(GRAPHQL).mock(
        return_value=httpx.Response(
            200,
            json={"data": {"viewer": {"login": BOT}, "rateLimit": {"cost": 3}}},
            headers=rl_headers(4990, reset=reset, resource="graphql"),
        )
    )
    data = await gateway.graphql("query { viewer { login } rateLimit { cost } }")
    assert data["viewer"] == {"login": BOT}
    assert records[0].cost == 3 and records[0].resource == "graphql"
    graphql = (await gateway.snapshot()).resources["graphql"]
    assert (graphql.limit, graphql.remaining) == (5000, 4990)


async def test_rate_limit_endpoint_refreshes_every_bucket(
    gateway: GitHubGateway, clock: ManualClock, mock: respx.MockRouter
) -> None:
    reset = int(clock.now()) + 1000
    body = {
        "resources": {
            "core": {"limit": 5000, "remaining": 4000, "used": 1000, "reset": reset},
            "search": {"limit": 30, "remaining": 29, "used": 1, "reset": reset},
        }
    }
    mock.get("/rate_limit").mock(return_value=httpx.Response(200, json=body))
    await gateway.rate_limit()
    snapshot = await gateway.snapshot()
    assert snapshot.resources["core"].remaining == 4000
    assert snapshot.resources["search"].limit == 30


async def test_a_malformed_repo_is_refused_by_name(gateway: GitHubGateway) -> None:
    with pytest.raises(ValueError, match=r"repo must look like 'owner/name', got 'just-a-name'"):
        await gateway.get_pull("just-a-name", 1)


def test_a_throttle_of_another_identity_is_refused(clock: ManualClock) -> None:
    with pytest.raises(
        ValueError,
        match=r"throttle belongs to 'other\[bot\]', not to identity 'swarm-reviewer\[bot\]'",
    ):
        GitHubGateway(BASE, BOT, lambda: "ghs_x", IdentityThrottle("other[bot]", clock=clock))


async def test_the_snapshot_shows_budget_and_requests_by_worker_as_json(
    gateway: GitHubGateway, clock: ManualClock, mock: respx.MockRouter
) -> None:
    mock.get("/repos/o/r/issues/1").mock(return_value=ok({"n": 1}, remaining=4321))
    await gateway.for_worker("a").get_issue("o/r", 1)
    await gateway.for_worker("b").get_issue("o/r", 1)
    await gateway.for_worker("b").get_issue("o/r", 1)
    snapshot = await gateway.snapshot()
    assert snapshot.identity == BOT
    assert snapshot.requests_by_worker == {"a": 1, "b": 2}
    core = snapshot.resources["core"]
    assert (core.limit, core.remaining, core.in_flight) == (5000, 4321, 0)
    assert '"identity":"swarm-reviewer[bot]"' in snapshot.model_dump_json()


async def test_host_credentials_are_never_sent(
    gateway: GitHubGateway, mock: respx.MockRouter
) -> None:
    from tests.conftest import HOST_GH_TOKEN

    route = mock.get("/repos/o/r/pulls/1").mock(return_value=ok({"n": 1}))
    await gateway.get_pull("o/r", 1)
    sent = dict(route.calls.last.request.headers)
    assert sent["authorization"] == "token ghs_gatewaytest"
    assert HOST_GH_TOKEN not in str(sent)
