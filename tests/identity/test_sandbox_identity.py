"""End to end against the sandbox GitHub: mint, seal, open, verify, revoke, over real HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agents.config import Settings, load_settings
from agents.envelope import (
    DispatchEnvelope,
    EnvelopeSealer,
    RoleRefs,
    TaskRef,
    generate_sealing_key,
)
from agents.identity import IdentityBlocked, MintRefused, PermissionRefused, TokenScope
from agents.identity.minter import InstallationMinter
from agents.identity.sources import IdentitySource, open_identity
from agents.identity.verify import IdentityVerifier
from sandbox.server import SandboxServer
from tests.identity.conftest import MAINTAINER, REVIEWER, dispatch


def settings_for(server: SandboxServer, tmp_path: Path, **extra: object) -> Settings:
    env = server.state.write_credentials(tmp_path / "creds", server.url)
    values: dict[str, object] = {}
    for line in env.read_text().splitlines():
        key, _, value = line.partition("=")
        values[key.removeprefix("SWARM_").lower()] = value
    identities: dict[str, dict[str, object]] = {}
    for key in [k for k in values if k.startswith("identities__")]:
        _, name, field = key.split("__")
        identities.setdefault(name, {})[field] = values.pop(key)
    values["identities"] = identities
    values.update(extra)
    return load_settings(**values)


def bot_pat_identity(sandbox: SandboxServer, tmp_path: Path, pat: str) -> IdentitySource:
    """The ``bot`` identity (a bot account's PAT, login ``swarm-bot``) holding ``pat``."""
    pat_file = tmp_path / "bot.token"
    pat_file.write_text(pat + "\n")
    bot = {"kind": "bot_pat", "token_file": pat_file, "bot_login": "swarm-bot"}
    return open_identity(settings_for(sandbox, tmp_path, identities={"bot": bot}), "bot")


@pytest.fixture
def settings(sandbox: SandboxServer, tmp_path: Path) -> Settings:
    return settings_for(sandbox, tmp_path)


@pytest.fixture
def reviewer(settings: Settings) -> Iterator[InstallationMinter]:
    source = open_identity(settings, "default")
    assert isinstance(source, InstallationMinter)
    yield source
    source.close()


@pytest.fixture
def verifier(sandbox: SandboxServer) -> Iterator[IdentityVerifier]:
    v = IdentityVerifier(sandbox.url, MAINTAINER)
    yield v
    v.close()


def test_minted_token_verifies_as_the_app_bot(
    sandbox: SandboxServer, reviewer: InstallationMinter, verifier: IdentityVerifier
) -> None:
    lease = reviewer.acquire(REVIEWER, role="reviewer", holder="w1")
    verified = verifier.verify(dispatch(lease))
    assert verified.login == "swarm-reviewer[bot]"
    assert verified.repositories == ("acme/widgets",)
    assert verified.permissions == {
        "contents": "read",
        "metadata": "read",
        "pull_requests": "write",
    }
    token = sandbox.state.tokens[lease.token.get_secret_value()]
    assert token.permissions == verified.permissions


def test_triage_identity_is_a_separate_app(settings: Settings, verifier: IdentityVerifier) -> None:
    triage = open_identity(settings, "triage")
    lease = triage.acquire(
        TokenScope(repositories=("acme/widgets",), permissions={"issues": "write"}),
        role="triager",
        holder="w1",
    )
    assert verifier.verify(dispatch(lease)).login == "swarm-triage[bot]"
    triage.close()


def test_sandbox_refuses_what_the_installation_lacks_and_we_refuse_the_ceiling_first(
    sandbox: SandboxServer, settings: Settings
) -> None:
    triage = open_identity(settings, "triage")
    with pytest.raises(MintRefused, match=r"installation 2002\), role 'triager': 422 "):
        triage.acquire(REVIEWER, role="triager", holder="w1")  # triage has no pull_requests
    with pytest.raises(PermissionRefused, match="exceeds the worker ceiling"):
        triage.acquire(
            TokenScope(repositories=("acme/widgets",), permissions={"issues": "admin"}),
            role="triager",
            holder="w1",
        )
    triage.close()


def test_long_dotted_tokens_round_trip(
    sandbox: SandboxServer, reviewer: InstallationMinter, verifier: IdentityVerifier
) -> None:
    sandbox.state.knobs.long_tokens = True
    lease = reviewer.acquire(REVIEWER, role="reviewer", holder="w1")
    assert len(lease.token.get_secret_value()) > 300
    assert verifier.verify(dispatch(lease)).login == "swarm-reviewer[bot]"
    reviewer.close()
    assert sandbox.state.tokens[lease.token.get_secret_value()].revoked


def test_wrong_expected_login_blocks_with_zero_writes(
    sandbox: SandboxServer, tmp_path: Path, verifier: IdentityVerifier
) -> None:
    # A dispatcher configured to expect the triage bot while holding the reviewer App's key.
    settings = settings_for(sandbox, tmp_path, app_bot_login="swarm-triage[bot]")
    source = open_identity(settings, "default")
    lease = source.acquire(REVIEWER, role="reviewer", holder="w1")
    with pytest.raises(IdentityBlocked) as blocked:
        verifier.verify(dispatch(lease))
    assert str(blocked.value) == (
        "BLOCKED: identity mismatch: login is swarm-reviewer[bot], expected swarm-triage[bot]"
    )
    writes = [r for r in sandbox.state.requests if r.is_write]
    assert [r.route for r in writes] == ["/app/installations/{installation_id}/access_tokens"]
    assert sandbox.state.counter("swarm-reviewer[bot]").writes == 0
    source.close()


def test_maintainer_pat_posing_as_the_bot_blocks_with_zero_writes(
    sandbox: SandboxServer, tmp_path: Path, verifier: IdentityVerifier
) -> None:
    source = bot_pat_identity(sandbox, tmp_path, sandbox.state.maintainer_pat)
    with pytest.raises(IdentityBlocked) as blocked:
        verifier.verify(dispatch(source.acquire(REVIEWER, role="reviewer", holder="w1")))
    assert (
        str(blocked.value) == "BLOCKED: identity mismatch: login is the maintainer octo-maintainer"
    )
    assert all(not r.is_write for r in sandbox.state.requests_by(MAINTAINER))
    assert sandbox.state.counter(MAINTAINER).writes == 0


def test_bot_account_pat_verifies(
    sandbox: SandboxServer, tmp_path: Path, verifier: IdentityVerifier
) -> None:
    source = bot_pat_identity(sandbox, tmp_path, sandbox.state.bot_pat)
    lease = source.acquire(REVIEWER, role="reviewer", holder="w1")
    assert verifier.verify(dispatch(lease)).login == "swarm-bot"


def test_missing_credential_blocks_without_a_request(
    sandbox: SandboxServer, reviewer: InstallationMinter, verifier: IdentityVerifier
) -> None:
    lease = reviewer.acquire(REVIEWER, role="reviewer", holder="w1")
    sealer = EnvelopeSealer(generate_sealing_key())
    env = DispatchEnvelope.issue(
        run_id="r",
        worker_id="w1",
        task=TaskRef(kind="review_pr", repo="acme/widgets", number=1),
        roles=RoleRefs(agent="reviewer"),
        identity=lease.claim(),
    )
    before = len(sandbox.state.requests)
    with pytest.raises(IdentityBlocked, match=r"^BLOCKED: no dispatcher credential$"):
        verifier.verify(sealer.open(sealer.seal(env, None, MAINTAINER)))
    assert len(sandbox.state.requests) == before
