"""Identity-test helpers: the sandbox GitHub's credentials as settings, dispatch (issue, seal,
open) for real, and one RSA App key per session for the offline JWT tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from pydantic import SecretStr

from agents.dispatch.envelope import DispatchEnvelope, OpenedEnvelope
from agents.dispatch.sealing import EnvelopeSealer, generate_sealing_key
from agents.identity import TokenScope
from agents.identity.lease import TokenLease
from agents.identity.minter import InstallationMinter
from agents.identity.sources import IdentitySource, open_identity
from agents.identity.verify import IdentityVerifier
from agents.roles import RoleRefs
from agents.settings.model import Settings, load_settings
from agents.work import Task
from sandbox.github.seed import MAINTAINER, credentials_env
from sandbox.server import SandboxServer

# The reviewer's token scope, shared by the identity tests.
REVIEWER = TokenScope(
    repositories=("acme/widgets",),
    permissions={"pull_requests": "write", "contents": "read", "metadata": "read"},
)
__all__ = ["MAINTAINER", "REVIEWER", "age", "bot_pat_identity", "dispatch", "settings_for"]


def settings_for(server: SandboxServer, tmp_path: Path, **extra: object) -> Settings:
    """Settings as a person would write them for the sandbox's Apps, plus ``extra``."""
    env = credentials_env(server.state, tmp_path / "creds", server.url)
    # Read from an env file: load_settings checks the values.
    values: dict[str, Any] = {key.removeprefix("SWARM_").lower(): v for key, v in env.items()}
    identities: dict[str, dict[str, object]] = {}
    for key in [k for k in values if k.startswith("identities__")]:
        _, name, field = key.split("__")
        identities.setdefault(name, {})[field] = values.pop(key)
    values["identities"] = identities
    values.update(extra)
    return load_settings(**values)


def bot_pat_identity(
    sandbox: SandboxServer, tmp_path: Path, pat: str, *, accept_broader_grant: bool = True
) -> IdentitySource:
    """The ``bot`` identity (a bot account's PAT, login ``swarm-bot``) holding ``pat``. The
    seeded bot PAT is fine-grained (its grant unstated), so these tests accept a broader grant
    unless told not to."""
    pat_file = tmp_path / "bot.token"
    pat_file.write_text(pat + "\n")
    bot = {
        "kind": "bot_pat",
        "token_file": pat_file,
        "bot_login": "swarm-bot",
        "accept_broader_grant": accept_broader_grant,
    }
    return open_identity(settings_for(sandbox, tmp_path, identities={"bot": bot}), "bot")


def dispatch(
    lease: TokenLease, credential: SecretStr | None = None, *, now: datetime | None = None
) -> OpenedEnvelope:
    """Dispatcher and worker halves, for real: issue, seal, open (``credential`` replaces the
    lease's token in the envelope)."""
    sealer = EnvelopeSealer(generate_sealing_key())
    env = DispatchEnvelope.issue(
        run_id="run-1",
        worker_id=lease.holder,
        task=Task(kind="review_pr", repo="acme/widgets", number=12, head_sha="abc1234"),
        roles=RoleRefs(agent="reviewer"),
        identity=lease.claim(),
        now=now,
    )
    sealed = sealer.seal(env, credential if credential is not None else lease.token, MAINTAINER)
    return sealer.open(sealed, now=now)


def age(minter: InstallationMinter, by: timedelta) -> None:
    """Make the minter's tokens ``by`` older as its freshness check sees them (the refresh margin
    grows by as much). JWTs stay on the real clock, which the sandbox checks them against."""
    minter.refresh_margin += by


@pytest.fixture
def settings(sandbox: SandboxServer, tmp_path: Path) -> Settings:
    return settings_for(sandbox, tmp_path)


@pytest.fixture
async def reviewer(settings: Settings) -> AsyncIterator[InstallationMinter]:
    """The reviewer App's minter (App 1001, installation 2001) on the sandbox."""
    source = open_identity(settings, "default")
    assert isinstance(source, InstallationMinter)
    yield source
    await source.aclose()


@pytest.fixture
async def verifier(sandbox: SandboxServer) -> AsyncIterator[IdentityVerifier]:
    v = IdentityVerifier(sandbox.url, MAINTAINER)
    yield v
    await v.aclose()


@pytest.fixture(scope="session")
def app_key() -> RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="session")
def app_pem(app_key: RSAPrivateKey) -> SecretStr:
    pem = app_key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return SecretStr(pem.decode("ascii"))
