"""The App JWT and the errors a person sees for a missing or unusable key."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from pydantic import SecretStr

from agents.identity.api import IdentityLink
from agents.identity.app_jwt import AppJwtSigner, load_rsa_key, read_private_key
from agents.identity.sources import BotPatIdentity, open_identity
from agents.settings.model import ConfigError, IdentitySettings, load_settings
from agents.transport import GitHubUnreachable

NOW = datetime(2026, 11, 29, 14, 0, tzinfo=UTC)


def test_jwt_is_rs256_backdated_and_short_lived(app_key: RSAPrivateKey, app_pem: SecretStr) -> None:
    token = AppJwtSigner(1001, app_pem, clock=lambda: NOW).jwt()
    claims = jwt.decode(
        token.get_secret_value(),
        app_key.public_key(),
        algorithms=["RS256"],
        options={"verify_exp": False, "verify_iat": False},
    )
    assert claims == {
        "iss": "1001",
        "iat": int((NOW - timedelta(seconds=60)).timestamp()),
        "exp": int((NOW + timedelta(minutes=9)).timestamp()),
    }
    assert jwt.get_unverified_header(token.get_secret_value())["alg"] == "RS256"
    assert "eyJ" not in repr(token)


def test_jwt_is_reused_until_a_minute_before_it_lapses(app_pem: SecretStr) -> None:
    now = [NOW]
    signer = AppJwtSigner(1001, app_pem, clock=lambda: now[0])
    first = signer.jwt()
    now[0] = NOW + timedelta(minutes=7, seconds=59)
    assert signer.jwt() == first
    now[0] = NOW + timedelta(minutes=8)
    assert signer.jwt() != first


def test_missing_key_file_names_the_setting(tmp_path: Path) -> None:
    ident = IdentitySettings(app_id=1, installation_id=2, private_key_file=tmp_path / "nope.pem")
    with pytest.raises(ConfigError) as err:
        read_private_key(ident, "default")
    assert (
        str(err.value) == f"SWARM_APP_PRIVATE_KEY_FILE: file {tmp_path / 'nope.pem'} does not exist"
    )


def test_named_identity_key_errors_name_its_own_setting(tmp_path: Path) -> None:
    ident = IdentitySettings(app_id=1, installation_id=2, private_key_file=tmp_path / "t.pem")
    with pytest.raises(ConfigError, match=r"^SWARM_IDENTITIES__TRIAGE__PRIVATE_KEY_FILE: file "):
        read_private_key(ident, "triage")


KEY_MATERIAL = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"


@pytest.mark.parametrize(
    ("pem", "problem"),
    [
        ("", "is empty"),
        (KEY_MATERIAL, "is not a PEM private key (expected '-----BEGIN ... KEY-----')"),
        (
            f"-----BEGIN PRIVATE KEY-----\n{KEY_MATERIAL}\n-----END PRIVATE KEY-----\n",
            "is not a valid PEM private key",
        ),
    ],
    ids=["empty", "not-pem", "corrupt"],
)
def test_malformed_key_is_a_config_error_without_key_material(pem: str, problem: str) -> None:
    with pytest.raises(ConfigError) as err:
        AppJwtSigner(1001, SecretStr(pem))
    assert str(err.value) == (
        f"SWARM_APP_PRIVATE_KEY_FILE (the App private key of identity 'default') {problem}"
    )
    assert KEY_MATERIAL not in str(err.value) and KEY_MATERIAL not in repr(err.value)
    assert err.value.__cause__ is None
    assert err.value.__context__ is None or err.value.__suppress_context__


def test_encrypted_key_is_refused(app_key: RSAPrivateKey) -> None:
    pem = app_key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"pw"),
    ).decode()
    with pytest.raises(ConfigError, match="is password-protected; GitHub App keys are unencrypted"):
        AppJwtSigner(1001, SecretStr(pem), identity_name="triage")


def test_non_rsa_key_is_refused() -> None:
    pem = (
        ec.generate_private_key(ec.SECP256R1())
        .private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        .decode()
    )
    with pytest.raises(ConfigError) as err:
        AppJwtSigner(1001, SecretStr(pem))
    assert str(err.value).endswith("is not an RSA key (GitHub Apps sign with RS256)")


def test_identity_that_is_the_maintainer_is_refused_at_configuration(tmp_path: Path) -> None:
    (tmp_path / "pat").write_text("ghp_whatever0123\n")
    settings = load_settings(
        maintainer_login="octo-maintainer",
        identities={
            "bot": {
                "kind": "bot_pat",
                "token_file": tmp_path / "pat",
                "bot_login": "Octo-Maintainer",
            }
        },
    )
    with pytest.raises(ConfigError) as err:
        open_identity(settings, "bot")
    assert str(err.value) == (
        "SWARM_IDENTITIES__BOT__BOT_LOGIN: identity 'bot' is the maintainer's login; "
        "swarm never acts as the maintainer"
    )


def test_bot_pat_identity_must_hold_a_pat() -> None:
    with pytest.raises(ConfigError) as err:
        BotPatIdentity(
            name="bot",
            token=SecretStr("ghs_installation0123"),
            bot_login="swarm-bot",
            maintainer_login="octo-maintainer",
            link=IdentityLink("http://127.0.0.1:9"),
        )
    assert str(err.value) == (
        "SWARM_IDENTITIES__BOT__TOKEN_FILE: identity 'bot' is a bot_pat identity but its token "
        "is not a personal access token (ghp_ or github_pat_)"
    )


@pytest.mark.anyio
async def test_open_identity_builds_each_kind_from_settings(
    tmp_path: Path, app_pem: SecretStr
) -> None:
    key = tmp_path / "k.pem"
    key.write_text(app_pem.get_secret_value())
    (tmp_path / "pat").write_text("github_pat_11BOT_x\n")
    settings = load_settings(
        github_api_url="http://127.0.0.1:1/api/v3",
        maintainer_login="octo-maintainer",
        app_id=1001,
        app_private_key_file=key,
        app_installation_id=2001,
        identities={
            "bot": {"kind": "bot_pat", "token_file": tmp_path / "pat", "bot_login": "swarm-bot"}
        },
    )
    app = open_identity(settings, "default")
    bot = open_identity(settings, "bot")
    assert app.kind == "app" and bot.kind == "bot_pat"
    with pytest.raises(GitHubUnreachable, match="cannot reach"):
        await bot.bot_login()  # a PAT is never taken at its word: only GitHub says whose it is
    assert "github_pat_" not in repr(bot) and "BEGIN" not in repr(app)
    await app.aclose()


def test_a_key_is_checked_once_per_process_and_a_rotated_key_is_checked_anew(
    app_key: RSAPrivateKey, app_pem: SecretStr
) -> None:
    """Every run builds its signers anew; the key's check (cryptography proves it consistent)
    is paid once. A rotated key is another key, and a broken one is still refused."""
    first = load_rsa_key(app_pem, setting="SWARM_APP_PRIVATE_KEY_FILE", identity_name="default")
    again = load_rsa_key(
        SecretStr(app_pem.get_secret_value()), setting="SWARM_APP_PRIVATE_KEY", identity_name="x"
    )
    assert again is first
    assert first.private_numbers() == app_key.private_numbers()

    rotated = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    rotated_pem = rotated.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    loaded = load_rsa_key(
        SecretStr(rotated_pem.decode()), setting="SWARM_APP_PRIVATE_KEY", identity_name="default"
    )
    assert loaded is not first
    assert loaded.private_numbers() == rotated.private_numbers()

    broken = app_pem.get_secret_value().replace("MII", "MIJ", 1)
    with pytest.raises(ConfigError, match="is not a valid PEM private key"):
        load_rsa_key(SecretStr(broken), setting="SWARM_APP_PRIVATE_KEY", identity_name="default")
