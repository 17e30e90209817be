"""REST and GraphQL endpoints for github.com, GitHub Enterprise and anything else."""

from __future__ import annotations

import httpx
import pytest
import respx
from pydantic import SecretStr

from agents.transport import ApiUrls
from agents.transport.auth import InstallationTokenAuth
from agents.transport.client import GitHubTransport

TOKEN = InstallationTokenAuth.fixed(SecretStr("ghs_urltest"), "swarm-reviewer[bot]")


@pytest.mark.parametrize(
    ("api_url", "rest", "graphql"),
    [
        ("https://api.github.com", "https://api.github.com", "https://api.github.com/graphql"),
        ("https://api.github.com/", "https://api.github.com", "https://api.github.com/graphql"),
        ("https://ghe.corp/api/v3", "https://ghe.corp/api/v3", "https://ghe.corp/api/graphql"),
        ("https://ghe.corp/api/v3/", "https://ghe.corp/api/v3", "https://ghe.corp/api/graphql"),
        ("http://127.0.0.1:8123", "http://127.0.0.1:8123", "http://127.0.0.1:8123/graphql"),
        (
            "http://proxy.corp/github",
            "http://proxy.corp/github",
            "http://proxy.corp/github/graphql",
        ),
    ],
)
def test_graphql_lives_beside_the_rest_base(api_url: str, rest: str, graphql: str) -> None:
    assert ApiUrls.of(api_url) == ApiUrls(rest=rest, graphql=graphql)


@pytest.mark.anyio
async def test_an_enterprise_transport_sends_rest_under_api_v3_and_graphql_to_api_graphql() -> None:
    transport = GitHubTransport("https://ghe.corp/api/v3/", identity="swarm-reviewer[bot]")
    with respx.mock(assert_all_mocked=True) as router:
        rest = router.get("https://ghe.corp/api/v3/repos/acme/widgets").respond(200, json={})
        graphql = router.post("https://ghe.corp/api/graphql").respond(200, json={"data": {}})
        assert (await transport.asend("GET", "/repos/acme/widgets", auth=TOKEN)).status_code == 200
        answer = await transport.asend(
            "POST", transport.urls.graphql, auth=TOKEN, json={"query": "{}"}
        )
        assert answer.status_code == 200
    assert rest.call_count == 1 and graphql.call_count == 1
    await transport.aclose()


@pytest.mark.anyio
async def test_an_answer_is_the_raw_httpx_response_of_the_same_urls() -> None:
    transport = GitHubTransport("https://ghe.corp/api/v3", identity="swarm-reviewer[bot]")
    with respx.mock(assert_all_mocked=True) as router:
        route = router.get("https://ghe.corp/api/v3/rate_limit").respond(200, json={})
        response = await transport.asend("GET", "/rate_limit", auth=TOKEN)
    assert response.status_code == 200 and route.call_count == 1
    assert isinstance(response, httpx.Response)
    await transport.aclose()
