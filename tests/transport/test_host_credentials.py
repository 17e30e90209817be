"""Nothing of the host's reaches GitHub: not GH_TOKEN, not a proxy, not a netrc entry."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from agents.transport import CredentialRefused
from agents.transport.auth import BotPatAuth, BotTokenAuth, InstallationTokenAuth
from agents.transport.client import GitHubTransport
from sandbox.github.seed import MAINTAINER, REVIEWER_BOT, REVIEWER_INSTALLATION_ID
from sandbox.server import SandboxServer


@pytest.fixture
def hostile_host(
    sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> SandboxServer:
    """The maintainer's PAT everywhere a client might look, and a proxy that does not exist."""
    pat = sandbox.state.maintainer_pat
    for name in ("GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_PAT"):
        monkeypatch.setenv(name, pat)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    netrc = tmp_path / ".netrc"
    netrc.write_text(f"machine 127.0.0.1 login {MAINTAINER} password {pat}\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    monkeypatch.setenv("HOME", str(tmp_path))
    return sandbox


@pytest.mark.anyio
async def test_calls_go_direct_as_the_bot_and_never_as_the_maintainer(
    hostile_host: SandboxServer,
) -> None:
    state = hostile_host.state
    token = SecretStr(state.mint_token(REVIEWER_INSTALLATION_ID))
    transport = GitHubTransport(hostile_host.url, identity=REVIEWER_BOT)
    auth = InstallationTokenAuth.fixed(token, REVIEWER_BOT)
    listed = await transport.asend("GET", "/installation/repositories", auth=auth)
    assert listed.status_code == 200
    viewer = await transport.asend(
        "POST", transport.urls.graphql, auth=auth, json={"query": "{ viewer { login } }"}
    )
    assert viewer.json()["data"]["viewer"]["login"] == REVIEWER_BOT
    assert state.requests_by(MAINTAINER) == []
    assert {r.login for r in state.requests} == {REVIEWER_BOT}
    await transport.aclose()


@pytest.mark.anyio
@pytest.mark.parametrize("empty", ["", None, SecretStr("")])
async def test_no_credential_sends_nothing_rather_than_borrowing_the_hosts(
    hostile_host: SandboxServer, empty: SecretStr | str | None
) -> None:
    transport = GitHubTransport(hostile_host.url, identity=REVIEWER_BOT)
    with pytest.raises(CredentialRefused, match=r"^no token for identity swarm-reviewer\[bot\]$"):
        await transport.asend("GET", "/user", auth=BotTokenAuth(lambda: empty, REVIEWER_BOT))
    assert hostile_host.state.requests == []
    await transport.aclose()


@pytest.mark.anyio
async def test_a_strategy_refuses_a_credential_of_the_wrong_kind_before_sending(
    hostile_host: SandboxServer,
) -> None:
    pat = SecretStr(hostile_host.state.maintainer_pat)
    transport = GitHubTransport(hostile_host.url, identity=REVIEWER_BOT)
    with pytest.raises(CredentialRefused) as refused:
        await transport.asend("GET", "/user", auth=InstallationTokenAuth.fixed(pat, REVIEWER_BOT))
    assert "classic pat token (ghp_), not an installation token (ghs_)" in str(refused.value)
    assert pat.get_secret_value() not in str(refused.value)
    installation = SecretStr(hostile_host.state.mint_token(REVIEWER_INSTALLATION_ID))
    with pytest.raises(CredentialRefused, match="not a PAT"):
        await transport.asend("GET", "/user", auth=BotPatAuth.fixed(installation, "bot"))
    assert hostile_host.state.requests == []
    await transport.aclose()
