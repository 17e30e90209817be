"""Worker-side identity verification against the respx GitHub fake."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from pydantic import SecretStr

from agents.envelope import (
    EnvelopeSealer,
    OpenedEnvelope,
    generate_sealing_key,
)
from agents.identity import IdentityBlocked, IdentityClaim, TokenScope, fingerprint
from agents.identity.lease import TokenLease
from agents.identity.minter import InstallationMinter
from agents.identity.sources import BotPatIdentity
from agents.identity.verify import IdentityVerifier, verify_identity
from tests.identity.conftest import API, MAINTAINER, REVIEWER, START, Clock
from tests.identity.conftest import dispatch as issue_and_open
from tests.identity.fake_github import FakeGitHub


def dispatch(lease: TokenLease, credential: SecretStr | None = None) -> OpenedEnvelope:
    return issue_and_open(lease, credential, now=START)


@pytest.fixture
def verifier(fake: FakeGitHub) -> Iterator[IdentityVerifier]:
    v = IdentityVerifier(API, MAINTAINER)
    yield v
    v.close()


def test_verified_identity_matches_the_envelope(
    minter: InstallationMinter, fake: FakeGitHub, verifier: IdentityVerifier
) -> None:
    lease = minter.acquire(REVIEWER, role="reviewer", holder="w1")
    verified = verifier.verify(dispatch(lease), now=START)
    assert verified.login == "swarm-reviewer[bot]"
    assert verified.repositories == ("acme/widgets",)
    assert verified.permissions == {
        "contents": "read",
        "metadata": "read",
        "pull_requests": "write",
    }
    assert verified.token_fingerprint == lease.fingerprint
    worker_calls = [s for s in fake.seen if s.credential_fp == lease.fingerprint]
    assert [(s.method, s.path) for s in worker_calls] == [
        ("POST", "/api/graphql"),  # GHES maps /api/v3 to /api/graphql
        ("GET", "/api/v3/installation/repositories"),
    ]
    assert fake.writes_by(lease.fingerprint) == []


@pytest.mark.parametrize(
    ("github_says", "refusal"),
    [
        ("Octo-Maintainer", "login is the maintainer Octo-Maintainer"),
        ("swarm-triage[bot]", "login is swarm-triage[bot], expected swarm-reviewer[bot]"),
    ],
)
def test_a_login_other_than_the_expected_bot_blocks_with_zero_writes(
    minter: InstallationMinter,
    fake: FakeGitHub,
    verifier: IdentityVerifier,
    github_says: str,
    refusal: str,
) -> None:
    fake.viewer_login_override = github_says
    lease = minter.acquire(REVIEWER, role="reviewer", holder="w1")
    with pytest.raises(IdentityBlocked) as blocked:
        verifier.verify(dispatch(lease), now=START)
    assert str(blocked.value) == f"BLOCKED: identity mismatch: {refusal}"
    assert blocked.value.code == "identity_mismatch"
    assert fake.writes_by(lease.fingerprint) == []


def test_token_reaching_more_repositories_than_the_envelope_blocks(
    minter: InstallationMinter, fake: FakeGitHub, verifier: IdentityVerifier
) -> None:
    lease = minter.acquire(REVIEWER, role="reviewer", holder="w1")
    fake.minted[lease.token.get_secret_value()]["repositories"].append("secret-sauce")
    with pytest.raises(IdentityBlocked) as blocked:
        verifier.verify(dispatch(lease), now=START)
    assert str(blocked.value) == (
        "BLOCKED: identity mismatch: the token reaches repositories outside the envelope: "
        "acme/secret-sauce"
    )
    assert fake.writes_by(lease.fingerprint) == []


def test_revoked_token_blocks_with_githubs_words(
    minter: InstallationMinter, fake: FakeGitHub, verifier: IdentityVerifier
) -> None:
    lease = minter.acquire(REVIEWER, role="reviewer", holder="w1")
    opened = dispatch(lease)
    fake.revoked.append(lease.token.get_secret_value())
    with pytest.raises(IdentityBlocked) as blocked:
        verifier.verify(opened, now=START)
    assert str(blocked.value) == (
        "BLOCKED: identity mismatch: GitHub did not say who the token is "
        "(viewer query: 401 Bad credentials)"
    )


def test_personal_token_in_an_app_envelope_blocks_on_the_worker_too(
    minter: InstallationMinter, fake: FakeGitHub, verifier: IdentityVerifier
) -> None:
    # A dispatcher that skipped its own check: the worker still refuses, before any request.
    lease = minter.acquire(REVIEWER, role="reviewer", holder="w1")
    sealed_ok = dispatch(lease)
    forged = OpenedEnvelope(envelope=sealed_ok.envelope, credential=SecretStr("ghp_maintainer123"))
    before = len(fake.seen)
    with pytest.raises(IdentityBlocked) as blocked:
        verifier.verify(forged, now=START)
    assert str(blocked.value) == (
        "BLOCKED: identity mismatch: identity 'default' is an App but the credential is a "
        "classic pat token (ghp_), not an installation token (ghs_)"
    )
    assert len(fake.seen) == before


def test_credential_swapped_for_another_installation_token_blocks(
    minter: InstallationMinter, fake: FakeGitHub, verifier: IdentityVerifier
) -> None:
    lease = minter.acquire(REVIEWER, role="reviewer", holder="w1")
    other = minter.acquire(
        TokenScope(repositories=("acme/gadgets",), permissions=dict(REVIEWER.permissions)),
        role="reviewer",
        holder="w2",
    )
    forged = OpenedEnvelope(envelope=dispatch(lease).envelope, credential=other.token)
    with pytest.raises(IdentityBlocked) as blocked:
        verifier.verify(forged, now=START)
    assert str(blocked.value) == (
        "BLOCKED: identity mismatch: the credential is not the token minted for this envelope "
        f"({other.fingerprint} != {lease.fingerprint})"
    )


def test_expired_token_blocks(
    minter: InstallationMinter, fake: FakeGitHub, verifier: IdentityVerifier
) -> None:
    lease = minter.acquire(REVIEWER, role="reviewer", holder="w1")
    with pytest.raises(IdentityBlocked, match="the token expired at 2026-11-29T15:00:00"):
        verifier.verify(dispatch(lease), now=START + timedelta(hours=2))


def test_verification_happens_once_per_token_and_again_after_a_remint(
    minter: InstallationMinter, fake: FakeGitHub, verifier: IdentityVerifier, clock: Clock
) -> None:
    lease = minter.acquire(REVIEWER, role="reviewer", holder="w1")
    opened = dispatch(lease)
    verifier.verify(opened, now=START)
    verifier.verify(opened, now=START)
    verifier.verify(dispatch(minter.acquire(REVIEWER, role="reviewer", holder="w2")), now=START)
    assert sum(1 for s in fake.seen if s.path == "/api/graphql") == 1
    clock.advance(timedelta(minutes=56))
    fresh = minter.acquire(REVIEWER, role="reviewer", holder="w3")
    assert fresh.fingerprint != lease.fingerprint
    verifier.verify(dispatch(fresh), now=clock.now)
    assert sum(1 for s in fake.seen if s.path == "/api/graphql") == 2


def test_bot_pat_identity_is_verified_by_get_user(fake: FakeGitHub) -> None:
    pat = "github_pat_11SWARMBOT_0123456789abcdef"
    fake.pat_logins[pat] = "swarm-bot"
    source = BotPatIdentity(name="bot", token=SecretStr(pat), bot_login="swarm-bot")
    lease = source.acquire(REVIEWER, role="reviewer", holder="w1")
    verified = verify_identity(API, dispatch(lease), MAINTAINER, now=START)
    assert verified.login == "swarm-bot" and verified.kind == "bot_pat"
    assert [s.path for s in fake.seen if s.credential_fp == fingerprint(pat)] == ["/api/v3/user"]


def test_bot_pat_that_belongs_to_the_maintainer_blocks(fake: FakeGitHub) -> None:
    pat = "ghp_actuallyTheMaintainersOwnPat0123"
    fake.pat_logins[pat] = "octo-maintainer"
    source = BotPatIdentity(name="bot", token=SecretStr(pat), bot_login="swarm-bot")
    with pytest.raises(IdentityBlocked) as blocked:
        verify_identity(API, dispatch(source.acquire(REVIEWER, role="r", holder="w")), MAINTAINER)
    assert (
        str(blocked.value) == "BLOCKED: identity mismatch: login is the maintainer octo-maintainer"
    )
    assert fake.writes_by(fingerprint(pat)) == []


def test_bot_pat_with_scopes_above_the_ceiling_blocks(fake: FakeGitHub) -> None:
    pat = "ghp_botWithWorkflowScope0123"
    fake.pat_logins[pat] = "swarm-bot"
    fake.pat_scopes = "repo, workflow, admin:org"
    source = BotPatIdentity(name="bot", token=SecretStr(pat), bot_login="swarm-bot")
    with pytest.raises(IdentityBlocked) as blocked:
        verify_identity(API, dispatch(source.acquire(REVIEWER, role="r", holder="w")), MAINTAINER)
    assert str(blocked.value) == (
        "BLOCKED: identity mismatch: the bot PAT carries scopes above the worker ceiling: "
        "workflow, admin:org"
    )


def test_host_credentials_change_nothing(
    minter: InstallationMinter,
    fake: FakeGitHub,
    verifier: IdentityVerifier,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    host_pat = "ghp_HOSTtokenFromTheEnvironment0001"
    monkeypatch.setenv("GH_TOKEN", host_pat)
    monkeypatch.setenv("GITHUB_TOKEN", host_pat)
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".netrc").write_text(
        f"machine ghe.example.test login octo-maintainer password {host_pat}\n"
    )
    # `gh` and `git` on PATH that leave a mark if anything asks them for a credential.
    marker = tmp_path / "asked"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("gh", "git"):
        script = bin_dir / tool
        script.write_text(f"#!/bin/sh\necho {tool} >> {marker}\necho {host_pat}\n")
        script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")

    lease = minter.acquire(REVIEWER, role="reviewer", holder="w1")
    verifier.verify(dispatch(lease), now=START)
    sealer = EnvelopeSealer(generate_sealing_key())
    empty = sealer.seal(dispatch(lease).envelope.model_copy(), None, MAINTAINER)
    with pytest.raises(IdentityBlocked, match=r"^BLOCKED: no dispatcher credential$"):
        verifier.verify(sealer.open(empty, now=START), now=START)

    assert not marker.exists()
    used = {s.credential_fp for s in fake.seen}
    assert fingerprint(host_pat) not in used
    assert used <= {lease.fingerprint, None} | {
        s.credential_fp for s in fake.seen if s.path.startswith("/api/v3/app")
    }


def test_claim_is_public_data() -> None:
    claim = IdentityClaim(name="x", kind="app", expected_login="a[bot]")
    assert claim.model_dump()["mint"] is None


def test_concurrent_workers_sharing_a_token_verify_it_once(
    minter: InstallationMinter, fake: FakeGitHub, verifier: IdentityVerifier
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    opened = dispatch(minter.acquire(REVIEWER, role="reviewer", holder="w1"))
    with ThreadPoolExecutor(max_workers=16) as pool:
        logins = set(pool.map(lambda _: verifier.verify(opened, now=START).login, range(50)))
    assert logins == {"swarm-reviewer[bot]"}
    assert sum(1 for s in fake.seen if s.path == "/api/graphql") == 1


def test_a_cached_verification_still_expires_with_its_token(
    minter: InstallationMinter, fake: FakeGitHub, verifier: IdentityVerifier
) -> None:
    opened = dispatch(minter.acquire(REVIEWER, role="reviewer", holder="w1"))
    verifier.verify(opened, now=START)
    with pytest.raises(IdentityBlocked, match="the token expired at"):
        verifier.verify(opened, now=START + timedelta(hours=1))
