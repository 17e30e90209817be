"""Two identities over one API never share a cached answer, a cache or a credential."""

from __future__ import annotations

import httpx
import pytest
import respx
from githubkit.cache import DEFAULT_CACHE_STRATEGY
from pydantic import SecretStr

from agents.transport.auth import InstallationTokenAuth
from agents.transport.client import GitHubTransport

API = "https://api.github.com"


def by_token(request: httpx.Request) -> httpx.Response:
    # Everything a caching client would keep: a validator, a long max-age, and "public".
    who = request.headers["authorization"].removeprefix("token ghs_")
    return httpx.Response(
        200,
        json={"seen_by": who},
        headers={"etag": '"one-etag-for-all"', "cache-control": "public, max-age=3600"},
    )


def auth(name: str) -> InstallationTokenAuth:
    return InstallationTokenAuth.fixed(SecretStr(f"ghs_{name}"), f"{name}[bot]")


@pytest.mark.anyio
async def test_each_identity_sees_its_own_answer_every_time_and_never_revalidates() -> None:
    one = GitHubTransport(API, identity="one[bot]")
    two = GitHubTransport(API, identity="two[bot]")
    with respx.mock(assert_all_mocked=True) as router:
        route = router.get(f"{API}/repos/o/r/pulls/1").mock(side_effect=by_token)
        seen = [
            (await t.asend("GET", "/repos/o/r/pulls/1", auth=auth(name))).json()["seen_by"]
            for t, name in ((one, "one"), (two, "two"), (one, "one"), (two, "two"))
        ]
    assert seen == ["one", "two", "one", "two"]
    assert route.call_count == 4  # nothing answered from a cache
    assert all("if-none-match" not in call.request.headers for call in route.calls)
    await one.aclose()
    await two.aclose()


def test_no_identity_uses_githubkits_process_wide_cache_or_the_host_environment() -> None:
    configs = [
        GitHubTransport(API, identity=name).client(auth(name)).config for name in ("one", "two")
    ]
    assert configs[0].cache_strategy is not configs[1].cache_strategy
    assert all(c.cache_strategy is not DEFAULT_CACHE_STRATEGY for c in configs)
    assert not any(c.http_cache or c.trust_env or c.auto_retry for c in configs)
