"""Worker-side identity verification against the sandbox GitHub, over real HTTP.

respx steps in only where GitHub itself must misbehave (a viewer answer naming someone else, a
PAT's scope header); every other request still reaches the sandbox.
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
import respx
from pydantic import SecretStr

from agents.dispatch.envelope import OpenedEnvelope
from agents.dispatch.sealing import EnvelopeSealer, generate_sealing_key
from agents.identity import IdentityBlocked, IdentityClaim, TokenScope
from agents.identity.minter import InstallationMinter
from agents.identity.sources import open_identity
from agents.identity.verify import IdentityVerifier, verify_identity
from agents.settings.model import Settings
from sandbox.server import SandboxServer
from tests.identity.conftest import (
    MAINTAINER,
    REVIEWER,
    age,
    bot_pat_identity,
    dispatch,
    settings_for,
)

pytestmark = pytest.mark.anyio

BOT = "swarm-reviewer[bot]"


@contextmanager
def github_answers(
    sandbox: SandboxServer, method: str, path: str, answer: httpx.Response
) -> Iterator[respx.Route]:
    """GitHub misbehaving on one route; every other request reaches the sandbox."""
    with respx.mock(assert_all_called=False) as router:
        route = router.request(method, f"{sandbox.url}{path}").mock(return_value=answer)
        router.route().pass_through()
        yield route


def viewer_calls(sandbox: SandboxServer) -> int:
    return sum(1 for r in sandbox.state.requests if r.route == "/graphql")


async def test_verified_identity_matches_the_envelope(
    sandbox: SandboxServer, reviewer: InstallationMinter, verifier: IdentityVerifier
) -> None:
    lease = await reviewer.acquire(REVIEWER, role="reviewer", holder="w1")
    verified = await verifier.verify(dispatch(lease))
    assert (verified.login, verified.kind) == (BOT, "app")
    assert verified.repositories == ("acme/widgets",)
    assert verified.permissions == {
        "contents": "read",
        "metadata": "read",
        "pull_requests": "write",
    }
    assert verified.permissions == sandbox.state.tokens[lease.token.get_secret_value()].permissions
    assert verified.token_fingerprint == lease.fingerprint
    calls = [(r.method, r.route, r.is_write) for r in sandbox.state.requests_by(BOT)]
    assert calls == [
        ("POST", "/graphql", False),
        ("GET", "/installation/repositories", False),
    ]


async def test_an_enterprise_server_is_asked_at_its_own_graphql_and_rest_paths(
    reviewer: InstallationMinter,
) -> None:
    lease = await reviewer.acquire(REVIEWER, role="reviewer", holder="w1")
    repos = {"total_count": 1, "repositories": [{"full_name": "acme/widgets"}]}
    with respx.mock(assert_all_mocked=True) as ghes:
        viewer = ghes.post("https://ghe.corp/api/graphql").respond(
            json={"data": {"viewer": {"login": BOT}}}
        )
        listed = ghes.get(url__startswith="https://ghe.corp/api/v3/installation/repositories")
        listed.respond(json=repos)
        verified = await verify_identity("https://ghe.corp/api/v3", dispatch(lease), MAINTAINER)
    assert verified.login == BOT and viewer.call_count == 1 and listed.call_count == 1


async def test_triage_identity_is_a_separate_app(
    settings: Settings, verifier: IdentityVerifier
) -> None:
    triage = open_identity(settings, "triage")
    lease = await triage.acquire(
        TokenScope(repositories=("acme/widgets",), permissions={"issues": "write"}),
        role="triager",
        holder="w1",
    )
    assert (await verifier.verify(dispatch(lease))).login == "swarm-triage[bot]"
    await triage.aclose()


async def test_long_dotted_tokens_round_trip(
    sandbox: SandboxServer, reviewer: InstallationMinter, verifier: IdentityVerifier
) -> None:
    sandbox.state.knobs.token_format = "long"
    lease = await reviewer.acquire(REVIEWER, role="reviewer", holder="w1")
    assert len(lease.token.get_secret_value()) > 300
    assert (await verifier.verify(dispatch(lease))).login == BOT
    await reviewer.aclose()
    assert sandbox.state.tokens[lease.token.get_secret_value()].revoked


async def blocked_by(verifier: IdentityVerifier, opened: OpenedEnvelope) -> IdentityBlocked:
    """The refusal ``verifier`` answers ``opened`` with (it must refuse it)."""
    with pytest.raises(IdentityBlocked) as blocked:
        await verifier.verify(opened)
    return blocked.value


async def test_a_dispatcher_expecting_another_bot_blocks_with_zero_writes(
    sandbox: SandboxServer, tmp_path: Path, verifier: IdentityVerifier
) -> None:
    # Configured to expect the triage bot while holding the reviewer App's key.
    settings = settings_for(sandbox, tmp_path, app_bot_login="swarm-triage[bot]")
    source = open_identity(settings, "default")
    lease = await source.acquire(REVIEWER, role="reviewer", holder="w1")
    blocked = await blocked_by(verifier, dispatch(lease))
    assert str(blocked) == (
        "BLOCKED: identity mismatch: login is swarm-reviewer[bot], expected swarm-triage[bot]"
    )
    assert blocked.code == "identity_mismatch"
    writes = [r for r in sandbox.state.requests if r.is_write]
    assert [r.route for r in writes] == ["/app/installations/{installation_id}/access_tokens"]
    await source.aclose()


async def test_a_viewer_answer_naming_the_maintainer_blocks(
    sandbox: SandboxServer, reviewer: InstallationMinter, verifier: IdentityVerifier
) -> None:
    lease = await reviewer.acquire(REVIEWER, role="reviewer", holder="w1")
    lying = httpx.Response(200, json={"data": {"viewer": {"login": "Octo-Maintainer"}}})
    with github_answers(sandbox, "POST", "/graphql", lying):
        blocked = await blocked_by(verifier, dispatch(lease))
    assert str(blocked) == "BLOCKED: identity mismatch: login is the maintainer Octo-Maintainer"
    assert [r for r in sandbox.state.requests_by(BOT) if r.is_write] == []


async def test_token_reaching_more_repositories_than_the_envelope_blocks(
    sandbox: SandboxServer, reviewer: InstallationMinter, verifier: IdentityVerifier
) -> None:
    lease = await reviewer.acquire(REVIEWER, role="reviewer", holder="w1")
    token = sandbox.state.tokens[lease.token.get_secret_value()]
    assert token.repository_ids is not None
    token.repository_ids.add(sandbox.state.repo("acme/docs").id)
    assert str(await blocked_by(verifier, dispatch(lease))) == (
        "BLOCKED: identity mismatch: the token reaches repositories outside the envelope: acme/docs"
    )


async def test_revoked_token_blocks_with_githubs_words(
    sandbox: SandboxServer, reviewer: InstallationMinter, verifier: IdentityVerifier
) -> None:
    lease = await reviewer.acquire(REVIEWER, role="reviewer", holder="w1")
    opened = dispatch(lease)
    sandbox.state.tokens[lease.token.get_secret_value()].revoked = True
    assert str(await blocked_by(verifier, opened)) == (
        "BLOCKED: identity mismatch: GitHub did not say who the token is "
        "(viewer query: 401 Bad credentials)"
    )


async def test_personal_token_in_an_app_envelope_blocks_before_any_request(
    sandbox: SandboxServer, reviewer: InstallationMinter, verifier: IdentityVerifier
) -> None:
    # A dispatcher that skipped its own check: the worker still refuses, before any request.
    opened = dispatch(await reviewer.acquire(REVIEWER, role="reviewer", holder="w1"))
    forged = OpenedEnvelope(envelope=opened.envelope, credential=SecretStr("ghp_maintainer123"))
    before = len(sandbox.state.requests)
    assert str(await blocked_by(verifier, forged)) == (
        "BLOCKED: identity mismatch: identity 'default' is an App but the credential is a "
        "classic pat token (ghp_), not an installation token (ghs_)"
    )
    assert len(sandbox.state.requests) == before


async def test_credential_swapped_for_another_installation_token_blocks(
    reviewer: InstallationMinter, verifier: IdentityVerifier
) -> None:
    lease = await reviewer.acquire(REVIEWER, role="reviewer", holder="w1")
    other = await reviewer.acquire(
        TokenScope(repositories=("acme/gadgets",), permissions=dict(REVIEWER.permissions)),
        role="reviewer",
        holder="w2",
    )
    forged = OpenedEnvelope(envelope=dispatch(lease).envelope, credential=other.token)
    assert str(await blocked_by(verifier, forged)) == (
        "BLOCKED: identity mismatch: the credential is not the token minted for this envelope "
        f"({other.fingerprint} != {lease.fingerprint})"
    )


async def test_expired_token_blocks_and_a_cached_verification_expires_with_it(
    reviewer: InstallationMinter, verifier: IdentityVerifier
) -> None:
    lease = await reviewer.acquire(REVIEWER, role="reviewer", holder="w1")
    assert lease.record is not None
    expires = lease.record.expires_at
    opened = dispatch(lease)
    await verifier.verify(opened)
    with pytest.raises(IdentityBlocked, match=re.escape(f"token expired at {expires.isoformat()}")):
        await verifier.verify(opened, now=expires)
    verifier.forget(lease.fingerprint)
    with pytest.raises(IdentityBlocked, match="the token expired at"):
        await verifier.verify(opened, now=expires + timedelta(hours=1))


async def test_verification_happens_once_per_token_and_again_after_a_remint(
    sandbox: SandboxServer, reviewer: InstallationMinter, verifier: IdentityVerifier
) -> None:
    lease = await reviewer.acquire(REVIEWER, role="reviewer", holder="w1")
    opened = dispatch(lease)
    await verifier.verify(opened)
    await verifier.verify(opened)
    await verifier.verify(dispatch(await reviewer.acquire(REVIEWER, role="reviewer", holder="w2")))
    assert viewer_calls(sandbox) == 1
    age(reviewer, timedelta(minutes=56))
    fresh = await reviewer.acquire(REVIEWER, role="reviewer", holder="w3")
    assert fresh.fingerprint != lease.fingerprint
    await verifier.verify(dispatch(fresh))
    assert viewer_calls(sandbox) == 2


async def test_concurrent_workers_sharing_a_token_verify_it_once(
    sandbox: SandboxServer, reviewer: InstallationMinter, verifier: IdentityVerifier
) -> None:
    opened = dispatch(await reviewer.acquire(REVIEWER, role="reviewer", holder="w1"))
    verified = await asyncio.gather(*(verifier.verify(opened) for _ in range(50)))
    logins = {v.login for v in verified}
    assert logins == {BOT}
    assert viewer_calls(sandbox) == 1


async def test_bot_account_pat_is_verified_by_get_user(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    lease = await bot_pat_identity(sandbox, tmp_path, sandbox.state.bot_pat).acquire(
        REVIEWER, role="reviewer", holder="w1"
    )
    verified = await verify_identity(sandbox.url, dispatch(lease), MAINTAINER)
    assert (verified.login, verified.kind) == ("swarm-bot", "bot_pat")
    # Asked before the PAT is lent, and again by the worker: nothing else, nothing written.
    assert [r.route for r in sandbox.state.requests_by("swarm-bot")] == ["/user", "/user"]


async def test_maintainer_pat_posing_as_the_bot_blocks_with_zero_writes(
    sandbox: SandboxServer, tmp_path: Path, verifier: IdentityVerifier
) -> None:
    source = bot_pat_identity(sandbox, tmp_path, sandbox.state.maintainer_pat)
    with pytest.raises(IdentityBlocked) as blocked:
        await verifier.verify(
            dispatch(await source.acquire(REVIEWER, role="reviewer", holder="w1"))
        )
    assert (
        str(blocked.value) == "BLOCKED: identity mismatch: login is the maintainer octo-maintainer"
    )
    assert all(not r.is_write for r in sandbox.state.requests_by(MAINTAINER))
    assert sandbox.state.counter(MAINTAINER).writes == 0


async def test_bot_pat_with_scopes_above_the_ceiling_blocks(
    sandbox: SandboxServer, tmp_path: Path, verifier: IdentityVerifier
) -> None:
    pat = "ghp_botWithWorkflowScope0123"
    source = bot_pat_identity(sandbox, tmp_path, pat)
    scopes = {"x-oauth-scopes": "repo, workflow, admin:org"}
    answer = httpx.Response(200, json={"login": "swarm-bot"}, headers=scopes)
    with github_answers(sandbox, "GET", "/user", answer), pytest.raises(IdentityBlocked) as blocked:
        await verifier.verify(dispatch(await source.acquire(REVIEWER, role="r", holder="w")))
    assert str(blocked.value) == (
        "BLOCKED: identity mismatch: the bot PAT carries scopes above the worker ceiling: "
        "workflow, admin:org"
    )


async def test_missing_credential_blocks_without_a_request(
    sandbox: SandboxServer, reviewer: InstallationMinter, verifier: IdentityVerifier
) -> None:
    lease = await reviewer.acquire(REVIEWER, role="reviewer", holder="w1")
    sealer = EnvelopeSealer(generate_sealing_key())
    empty = sealer.open(sealer.seal(dispatch(lease).envelope, None, MAINTAINER))
    before = len(sandbox.state.requests)
    with pytest.raises(IdentityBlocked, match=r"^BLOCKED: no dispatcher credential$") as blocked:
        await verifier.verify(empty)
    assert blocked.value.code == "no_credential"
    assert len(sandbox.state.requests) == before


async def test_host_credentials_change_nothing(
    sandbox: SandboxServer,
    reviewer: InstallationMinter,
    verifier: IdentityVerifier,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    host_pat = sandbox.state.maintainer_pat
    monkeypatch.setenv("GH_TOKEN", host_pat)
    monkeypatch.setenv("GITHUB_TOKEN", host_pat)
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".netrc").write_text(f"machine 127.0.0.1 login {MAINTAINER} password {host_pat}\n")
    # `gh` and `git` on PATH that leave a mark if anything asks them for a credential.
    marker = tmp_path / "asked"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("gh", "git"):
        script = bin_dir / tool
        script.write_text(f"#!/bin/sh\necho {tool} >> {marker}\necho {host_pat}\n")
        script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")

    lease = await reviewer.acquire(REVIEWER, role="reviewer", holder="w1")
    assert (await verifier.verify(dispatch(lease))).login == BOT
    assert not marker.exists()
    assert sandbox.state.requests_by(MAINTAINER) == []


def test_claim_is_public_data() -> None:
    claim = IdentityClaim(name="x", kind="app", expected_login="a[bot]")
    assert claim.model_dump()["mint"] is None
