"""Sealing and opening dispatch envelopes: refusals, tampering, expiry, and no plaintext."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import SecretStr

from agents.dispatch.envelope import (
    Budgets,
    DispatchEnvelope,
    EnvelopeRejected,
    SealedEnvelope,
    envelope_hash,
)
from agents.dispatch.sealing import EnvelopeSealer, SealRefused, generate_sealing_key
from agents.identity import IdentityClaim, MintRecord, fingerprint
from agents.roles import RoleRefs
from agents.settings.model import ConfigError
from agents.work import Task
from sandbox.github.records import TOKEN_FORMATS
from sandbox.github.tokens import installation_token_value
from tests.leakscan import leaks, sealed_forms

NOW = datetime(2026, 11, 29, 14, 0, tzinfo=UTC)
TOKEN = "ghs_" + "SeCrEtInStAlLaTiOnToKeN.with.dots-" * 12
MAINTAINER = "octo-maintainer"
PERMS = {"contents": "read", "metadata": "read", "pull_requests": "write"}


def claim(token: str = TOKEN, **overrides: object) -> IdentityClaim:
    values: dict[str, object] = {
        "name": "reviewer",
        "kind": "app",
        "expected_login": "swarm-reviewer[bot]",
        "installation_id": 2001,
        "permissions": PERMS,
        "repositories": ("acme/widgets",),
        "mint": MintRecord(
            token_fingerprint=fingerprint(token),
            installation_id=2001,
            permissions=PERMS,
            repositories=("acme/widgets",),
            minted_at=NOW,
            expires_at=NOW + timedelta(hours=1),
        ),
    }
    values.update(overrides)
    return IdentityClaim.model_validate(values)


def envelope(
    identity: IdentityClaim | None = None, ttl: timedelta = timedelta(minutes=30)
) -> DispatchEnvelope:
    return DispatchEnvelope.issue(
        run_id="run-1",
        worker_id="worker-7",
        task=Task(kind="review_pr", repo="acme/widgets", number=12, head_sha="abc1234def"),
        roles=RoleRefs(agent="reviewer", session="security"),
        identity=identity or claim(),
        budgets=Budgets(turns=8),
        ttl=ttl,
        now=NOW,
    )


@pytest.fixture
def sealer() -> EnvelopeSealer:
    return EnvelopeSealer(generate_sealing_key())


@pytest.fixture(params=TOKEN_FORMATS)
def token(request: pytest.FixtureRequest) -> str:
    """An installation token of each shape GitHub mints (stateless: ``ghs_<app id>_<JWT>``)."""
    return installation_token_value(
        request.param, 1001, 2001, (NOW + timedelta(hours=1)).timestamp()
    )


def test_seal_then_open_returns_the_credential(sealer: EnvelopeSealer, token: str) -> None:
    sealed = sealer.seal(envelope(claim(token)), SecretStr(token), MAINTAINER)
    opened = sealer.open(sealed, now=NOW + timedelta(minutes=1))
    assert opened.credential is not None
    assert opened.credential.get_secret_value() == token
    assert opened.envelope == sealed.envelope


def test_sealed_envelope_survives_a_json_round_trip(sealer: EnvelopeSealer, token: str) -> None:
    sealed = sealer.seal(envelope(claim(token)), SecretStr(token), MAINTAINER)
    again = SealedEnvelope.model_validate_json(sealed.model_dump_json())
    assert sealer.open(again, now=NOW).credential == SecretStr(token)
    assert envelope_hash(again) == envelope_hash(sealed)
    assert sealer.open(pickle.loads(pickle.dumps(sealed)), now=NOW).credential is not None


def test_no_serialised_form_shows_the_token(sealer: EnvelopeSealer, token: str) -> None:
    sealed = sealer.seal(envelope(claim(token)), SecretStr(token), MAINTAINER)
    opened = sealer.open(sealed, now=NOW)
    forms = [*sealed_forms(sealed), repr(opened), str(opened), repr(sealer)]
    assert leaks([token], *forms) == []
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(opened)
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(sealer)


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["envelope"]["task"].update(number=13),
        lambda d: d["envelope"]["identity"].update(expected_login="someone-else[bot]"),
        lambda d: d["envelope"]["identity"]["permissions"].update(contents="write"),
        lambda d: d["envelope"]["budgets"].update(turns=800),
        lambda d: d["envelope"].update(expires_at="2027-01-01T00:00:00Z"),
        lambda d: d.update(
            ciphertext=d["ciphertext"][:-4] + ("AAAA" if d["ciphertext"][-4:] != "AAAA" else "BBBB")
        ),
        lambda d: d.update(ciphertext=None),
        lambda d: d.update(signature="A" * 43 + "="),
    ],
    ids=["task", "login", "permission", "budget", "expiry", "ciphertext", "stripped", "signature"],
)
def test_tampered_envelope_is_rejected(
    sealer: EnvelopeSealer, change: Callable[[dict[str, Any]], object]
) -> None:
    data = sealer.seal(envelope(), SecretStr(TOKEN), MAINTAINER).model_dump(mode="json")
    change(data)
    with pytest.raises(EnvelopeRejected) as rejected:
        sealer.open(SealedEnvelope.model_validate(data), now=NOW)
    assert str(rejected.value) == "BLOCKED: envelope signature invalid"


def test_envelope_sealed_with_another_key_is_rejected(sealer: EnvelopeSealer) -> None:
    sealed = EnvelopeSealer(generate_sealing_key()).seal(envelope(), SecretStr(TOKEN), MAINTAINER)
    with pytest.raises(EnvelopeRejected, match=r"^BLOCKED: envelope signature invalid$"):
        sealer.open(sealed, now=NOW)


def test_expired_envelope_is_rejected(sealer: EnvelopeSealer) -> None:
    sealed = sealer.seal(envelope(ttl=timedelta(minutes=10)), SecretStr(TOKEN), MAINTAINER)
    with pytest.raises(EnvelopeRejected) as rejected:
        sealer.open(sealed, now=NOW + timedelta(minutes=10))
    assert str(rejected.value) == "BLOCKED: envelope expired at 2026-11-29T14:10:00+00:00"


def test_envelope_never_outlives_its_token() -> None:
    env = envelope(ttl=timedelta(hours=5))
    assert env.expires_at == NOW + timedelta(hours=1)


def test_missing_credential_opens_to_none(sealer: EnvelopeSealer) -> None:
    sealed = sealer.seal(envelope(), None, MAINTAINER)
    assert sealed.ciphertext is None
    assert sealer.open(sealed, now=NOW).credential is None


@pytest.mark.parametrize(
    ("pat", "prefix"),
    [
        ("ghp_maintainerClassicPat0123456789", "ghp_"),
        ("github_pat_11ABCDEF_fineGrained0123456789", "github_pat_"),
        ("gho_oauthToken0123456789", "gho_"),
        ("ghu_userToServer0123456789", "ghu_"),
    ],
)
def test_pat_in_an_app_envelope_is_refused(sealer: EnvelopeSealer, pat: str, prefix: str) -> None:
    env = envelope(claim(token=pat))
    with pytest.raises(SealRefused) as refused:
        sealer.seal(env, SecretStr(pat), MAINTAINER)
    assert str(refused.value) == (
        f"refusing to seal envelope {env.envelope_id}: identity 'reviewer' is an App but the "
        f"credential is a personal token ({prefix}); a PAT never travels in an App envelope"
    )
    assert pat not in str(refused.value)


@pytest.mark.parametrize("login", ["octo-maintainer", "Octo-Maintainer"])
def test_identity_resolving_to_the_maintainer_is_refused(
    sealer: EnvelopeSealer, login: str
) -> None:
    env = envelope(claim(kind="bot_pat", expected_login=login, mint=None, installation_id=None))
    with pytest.raises(SealRefused) as refused:
        sealer.seal(env, SecretStr("ghp_botpat0123456789"), MAINTAINER)
    assert str(refused.value) == (
        f"refusing to seal envelope {env.envelope_id}: identity 'reviewer' resolves to the "
        f"maintainer login {login}; swarm never acts as the maintainer"
    )


def test_credential_that_is_not_the_minted_token_is_refused(sealer: EnvelopeSealer) -> None:
    env = envelope()
    with pytest.raises(SealRefused, match="not the token its mint record describes"):
        sealer.seal(env, SecretStr("ghs_someOtherInstallationToken"), MAINTAINER)


def test_bot_pat_envelope_seals_a_bot_pat(sealer: EnvelopeSealer) -> None:
    env = envelope(
        claim(kind="bot_pat", expected_login="swarm-bot", mint=None, installation_id=None)
    )
    sealed = sealer.seal(env, SecretStr("github_pat_11BOT_abc"), MAINTAINER)
    assert sealer.open(sealed, now=NOW).credential == SecretStr("github_pat_11BOT_abc")
    with pytest.raises(SealRefused, match="is a bot account but the credential is not a PAT"):
        sealer.seal(env, SecretStr(TOKEN), MAINTAINER)


@pytest.mark.parametrize("bad", ["", "short", "!!!not base64!!!", "A" * 60])
def test_bad_sealing_key_is_a_config_error_without_the_value(bad: str) -> None:
    with pytest.raises(ConfigError) as err:
        EnvelopeSealer(SecretStr(bad))
    assert str(err.value) == (
        "SWARM_SEALING_KEY must be 32 random bytes, urlsafe base64 encoded "
        "(leave it unset to generate one per run)"
    )


def test_envelope_hash_changes_with_any_field(sealer: EnvelopeSealer) -> None:
    a = sealer.seal(envelope(), SecretStr(TOKEN), MAINTAINER)
    b = sealer.seal(envelope(), SecretStr(TOKEN), MAINTAINER)
    assert envelope_hash(a).startswith("sha256:")
    assert envelope_hash(a) != envelope_hash(b)  # new envelope id, new nonce


def test_task_repo_must_be_owner_slash_name() -> None:
    with pytest.raises(ValueError, match="is not OWNER/NAME"):
        Task(kind="review_pr", repo="widgets", number=1)


def test_task_outside_the_identity_repositories_is_refused(sealer: EnvelopeSealer) -> None:
    env = DispatchEnvelope.issue(
        run_id="run-1",
        worker_id="w",
        task=Task(kind="review_pr", repo="acme/gadgets", number=1),
        roles=RoleRefs(agent="reviewer"),
        identity=claim(),
        now=NOW,
    )
    with pytest.raises(SealRefused) as refused:
        sealer.seal(env, SecretStr(TOKEN), MAINTAINER)
    assert str(refused.value) == (
        f"refusing to seal envelope {env.envelope_id}: identity 'reviewer': the task's "
        "repository acme/gadgets is not among the identity's repositories (acme/widgets)"
    )
