"""A failure names the API, method and path; it never carries a credential or the request.

Secrets are planted in every credential a strategy can send; each failure is then read the ways
a person or a log would see it: ``str``, ``repr``, the formatted traceback with its whole chain.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterator

import httpx
import pytest
import respx
from pydantic import SecretStr

from agents.github import IdentityThrottle
from agents.github.gateway import GitHubGateway
from agents.transport import CredentialRefused, GitHubUnreachable
from agents.transport.auth import AppJwtAuth, BotPatAuth, CredentialAuth, InstallationTokenAuth
from agents.transport.client import GitHubTransport
from tests.github.helpers import ManualClock
from tests.ports import closed_port

MARK = "PLANTEDtransportCANARY"
INSTALLATION = SecretStr(f"ghs_{MARK}.with.dots.{'x' * 400}")
PAT = SecretStr(f"github_pat_{MARK}_fineGrained")
JWT = SecretStr(f"eyJhbGciOiJSUzI1NiJ9.{MARK}.signature")
STRATEGIES: list[CredentialAuth] = [
    InstallationTokenAuth.fixed(INSTALLATION, "swarm-reviewer[bot]"),
    BotPatAuth.fixed(PAT, "swarm-bot"),
    AppJwtAuth.fixed(JWT, "default"),
]


def everything_shown(exc: BaseException) -> Iterator[str]:
    yield str(exc)
    yield repr(exc)
    yield "".join(traceback.format_exception(exc))
    for linked in (exc.__cause__, exc.__context__):
        if linked is not None:
            yield from everything_shown(linked)


def assert_clean(exc: BaseException) -> None:
    for text in everything_shown(exc):
        assert MARK not in text
        assert "authorization" not in text.lower()


@pytest.mark.anyio
@pytest.mark.parametrize("auth", STRATEGIES, ids=lambda a: type(a).__name__)
async def test_a_refused_connection_names_where_and_nothing_else(auth: CredentialAuth) -> None:
    api = f"http://127.0.0.1:{closed_port()}"
    transport = GitHubTransport(api, identity=auth.identity, timeout=5)
    with pytest.raises(GitHubUnreachable) as caught:
        await transport.asend("GET", "/installation/repositories?page=2", auth=auth)
    where = "GET /installation/repositories"
    assert str(caught.value) == f"cannot reach {api} for {where}: ConnectError"
    assert caught.value.kind == "could not connect"
    assert caught.value.__cause__ is None and caught.value.__context__ is None
    assert_clean(caught.value)
    await transport.aclose()


@pytest.mark.anyio
@pytest.mark.parametrize("auth", STRATEGIES, ids=lambda a: type(a).__name__)
async def test_a_timeout_is_told_apart_and_carries_no_request(auth: CredentialAuth) -> None:
    transport = GitHubTransport("https://ghe.corp/api/v3", identity=auth.identity)
    with respx.mock() as router:
        router.post("https://ghe.corp/api/graphql").mock(side_effect=httpx.ReadTimeout)
        with pytest.raises(GitHubUnreachable) as caught:
            await transport.asend("POST", transport.urls.graphql, auth=auth, json={"query": "{}"})
    assert caught.value.kind == "timed out"
    assert str(caught.value).endswith("for POST /api/graphql: ReadTimeout")
    assert_clean(caught.value)
    await transport.aclose()


@pytest.mark.anyio
async def test_a_wrong_kind_of_credential_is_named_by_kind_only() -> None:
    transport = GitHubTransport("https://api.github.com", identity="swarm-reviewer[bot]")
    with respx.mock(assert_all_called=False) as router:
        route = router.route().respond(200)
        for auth in (
            InstallationTokenAuth.fixed(PAT, "swarm-reviewer[bot]"),
            BotPatAuth.fixed(INSTALLATION, "swarm-bot"),
            AppJwtAuth.fixed(INSTALLATION, "default"),
        ):
            with pytest.raises(CredentialRefused) as caught:
                await transport.asend("GET", "/app", auth=auth)
            assert_clean(caught.value)
    assert route.call_count == 0
    assert repr(STRATEGIES) == (
        "[InstallationTokenAuth(identity='swarm-reviewer[bot]'), "
        "BotPatAuth(identity='swarm-bot'), AppJwtAuth(identity='default')]"
    )


@pytest.mark.anyio
async def test_the_gateway_reports_an_unreachable_github_without_the_token() -> None:
    api = f"http://127.0.0.1:{closed_port()}"
    throttle = IdentityThrottle("swarm-reviewer[bot]", clock=ManualClock())
    gateway = GitHubGateway(api, "swarm-reviewer[bot]", lambda: INSTALLATION, throttle)
    with pytest.raises(GitHubUnreachable) as caught:
        await gateway.get_pull("acme/widgets", 1)
    # The same error the transport and the identity layer raise, after the gateway's retries.
    assert (
        str(caught.value)
        == "GitHub GET /repos/{owner}/{repo}/pulls/{pull_number}: could not connect"
    )
    assert (caught.value.kind, caught.value.origin) == ("could not connect", "ConnectError")
    assert_clean(caught.value)
    await gateway.aclose()
