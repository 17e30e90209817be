"""Shared fixtures: one RSA App key per session, a controllable clock, the respx GitHub fake."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import respx
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from pydantic import SecretStr

from agents.envelope import (
    DispatchEnvelope,
    EnvelopeSealer,
    OpenedEnvelope,
    RoleRefs,
    TaskRef,
    generate_sealing_key,
)
from agents.identity import TokenScope
from agents.identity.lease import TokenLease
from agents.identity.minter import InstallationMinter
from tests.identity.fake_github import FakeGitHub

# The maintainer login and the reviewer's token scope, shared by the identity tests.
MAINTAINER = "octo-maintainer"
REVIEWER = TokenScope(
    repositories=("acme/widgets",),
    permissions={"pull_requests": "write", "contents": "read", "metadata": "read"},
)


API = "https://ghe.example.test/api/v3"
START = datetime(2026, 11, 29, 14, 0, tzinfo=UTC)


class Clock:
    def __init__(self, start: datetime = START) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> None:
        self.now += delta


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


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def fake(app_key: RSAPrivateKey) -> Iterator[FakeGitHub]:
    github = FakeGitHub(api_url=API, app_key=app_key, now=START)
    with respx.mock(assert_all_called=False, assert_all_mocked=True) as router:
        github.install(router)
        yield github


def dispatch(
    lease: TokenLease, credential: SecretStr | None = None, *, now: datetime | None = None
) -> OpenedEnvelope:
    """Dispatcher and worker halves, for real: issue, seal, open (``credential`` replaces the
    lease's token in the envelope)."""
    sealer = EnvelopeSealer(generate_sealing_key())
    env = DispatchEnvelope.issue(
        run_id="run-1",
        worker_id=lease.holder,
        task=TaskRef(kind="review_pr", repo="acme/widgets", number=12, head_sha="abc1234"),
        roles=RoleRefs(agent="reviewer"),
        identity=lease.claim(),
        now=now,
    )
    sealed = sealer.seal(env, credential if credential is not None else lease.token, MAINTAINER)
    return sealer.open(sealed, now=now)


@pytest.fixture
def minter(fake: FakeGitHub, app_pem: SecretStr, clock: Clock) -> Iterator[InstallationMinter]:
    m = InstallationMinter(
        api_url=API, app_id=1001, installation_id=2001, private_key=app_pem, clock=clock
    )
    yield m
    m.close()
