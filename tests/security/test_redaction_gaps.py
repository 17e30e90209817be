"""Trust class 6, redaction gaps: a secret survives when it is not where the patterns expect it.

Written as the text a leak really produces: a token JSON-encoded or ``repr``-ed right after an
escape, glued to a word, wrapped over a line, base64-encoded inside a Basic header, nested in
bytes or sets; the sealing key in each form it takes; a configured secret of no known shape.
"""

from __future__ import annotations

import base64
import json
import os
import string
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.dispatch.sealing import EnvelopeSealer, generate_sealing_key
from agents.redact import redact, redact_obj
from agents.settings.model import load_settings

PATIENT = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ALNUM = string.ascii_letters + string.digits
random_run = st.text(alphabet=ALNUM, min_size=36, max_size=80).filter(
    lambda s: any(c.isdigit() for c in s) and any(c.isupper() for c in s)
)


@st.composite
def tokens(draw: st.DrawFn) -> str:
    prefix = draw(st.sampled_from(["ghs_", "ghp_", "gho_", "ghu_", "ghr_", "github_pat_"]))
    return prefix + draw(random_run)


anthropic_keys = random_run.map(lambda r: "sk-ant-api03-" + r)
secrets_ = st.one_of(tokens(), anthropic_keys)
# What sits right before a secret in JSON, repr or source text.
escapes = st.sampled_from(["\n", "\t", "\r", "é", "\x00", "\u2028", "\x1b", "ß", "\\"])
glue = st.sampled_from(["my_", "x", "_", "A9", "token:", "=", "\\n", "\\u00e9", "\\x41"])


def _leaked(secret: str, out: str) -> bool:
    # The random part is what an attacker needs; any 12 characters of it count as a leak.
    body = secret.split("_", 1)[-1] if secret.startswith("gh") else secret[13:]
    return any(body[i : i + 12] in out for i in range(0, len(body) - 11))


@given(secrets_, escapes)
@PATIENT
def test_a_secret_right_after_an_escape_in_json_or_repr_is_redacted(secret: str, esc: str) -> None:
    value = f"before{esc}{secret}"
    for text in (
        json.dumps({"body": value}),
        json.dumps({"body": value}, ensure_ascii=False),
        repr(value),
        repr(value.encode("utf-8")),
        repr({"k": [value]}),
        str([value]),
    ):
        assert not _leaked(secret, redact(text)), text


@given(secrets_, glue)
@PATIENT
def test_a_secret_glued_to_a_word_or_an_escape_is_redacted(secret: str, before: str) -> None:
    assert not _leaked(secret, redact(f"see {before}{secret} now"))


@given(secrets_, st.integers(min_value=12, max_value=30), st.sampled_from(["\n", "\r\n", "\\n"]))
@PATIENT
def test_the_tail_of_a_secret_wrapped_over_a_line_is_redacted(
    secret: str, width: int, newline: str
) -> None:
    wrapped = newline.join(secret[i : i + width] for i in range(0, len(secret), width))
    out = redact(f"pasted:\n{wrapped}\nthat was it")
    assert not _leaked(secret, out), out
    assert out.endswith("that was it")


@given(tokens(), st.sampled_from(["x-access-token", "octo-bot", "x"]))
@PATIENT
def test_base64_of_a_basic_credential_is_redacted_at_any_length(token: str, user: str) -> None:
    encoded = base64.b64encode(f"{user}:{token}".encode()).decode()
    for text in (
        encoded,
        f"extraheader = AUTHORIZATION: basic {encoded}",
        f"authorization: basic {encoded}",
        f'curl -H "authorization: basic {encoded}"',
        f"use basic {encoded} here",
        json.dumps({"header": f"\nbasic {encoded}"}),
    ):
        out = redact(text)
        assert encoded[8:] not in out, out
        assert not _leaked(token, out)


def test_lowercase_basic_with_a_password_of_no_known_shape_is_redacted() -> None:
    encoded = base64.b64encode(b"deploy:correct-horse-battery").decode()
    assert encoded not in redact(f"header: basic {encoded}")
    assert encoded not in redact(f"Authorization=basic {encoded}")
    # Prose stays prose.
    assert redact("a basic understanding of basic version2") == (
        "a basic understanding of basic version2"
    )


@given(
    secrets_,
    st.sampled_from(
        [
            lambda s: {"items": {s.encode()}},
            lambda s: [frozenset({s})],
            lambda s: ({"nested": [bytearray(s.encode())]},),
            lambda s: {s.encode(): 1},
            lambda s: {"payload": b"prefix\n" + s.encode() + b"\xff"},
            lambda s: {"sealing_key": s.encode()},
        ]
    ),
)
@PATIENT
def test_bytes_and_sets_inside_containers_are_redacted(
    secret: str, shape: Callable[[str], object]
) -> None:
    obj = shape(secret)
    out = redact_obj(obj)
    assert not _leaked(secret, repr(out)), repr(out)
    assert type(out) is type(obj)


def test_the_sealing_key_is_redacted_in_every_form(monkeypatch: pytest.MonkeyPatch) -> None:
    key = generate_sealing_key().get_secret_value()
    configured = base64.urlsafe_b64encode(os.urandom(32)).decode()
    monkeypatch.setenv("SWARM_SEALING_KEY", configured)
    load_settings()  # start-up registers every configured secret value
    EnvelopeSealer(key)  # a generated key is registered when it is used
    for value in (key, configured):
        raw = base64.urlsafe_b64decode(value)
        forms = [
            value,
            f"note: {value} is the key",
            f"SWARM_SEALING_KEY={value}",
            f'export SWARM_SEALING_KEY="{value}"',
            json.dumps({"sealing_key": value}),
            repr({"sealing_key": value.encode()}),
            f"sealing_key: {value}",
            value.rstrip("="),
            base64.b64encode(raw).decode(),
        ]
        for text in forms:
            assert value.rstrip("=")[:40] not in redact(text), text
            assert base64.b64encode(raw).decode()[:40] not in redact(text), text
        assert redact_obj({"sealing_key": value.encode()}) == {"sealing_key": "[REDACTED:secret]"}
        assert redact_obj({"SWARM_SEALING_KEY": value}) == {
            "SWARM_SEALING_KEY": "[REDACTED:secret]"
        }


def test_configured_secrets_of_no_known_shape_are_redacted_as_literals(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pat = "zzbot-" + os.urandom(12).hex()  # a bot PAT in a format no pattern knows
    pat_file_value = "file-held-" + os.urandom(12).hex()
    api_key = "corp-gateway-" + os.urandom(12).hex()
    token_file = tmp_path / "bot.token"
    token_file.write_text(pat_file_value + "\n")
    monkeypatch.setenv("SWARM_IDENTITIES__BOT__KIND", "bot_pat")
    monkeypatch.setenv("SWARM_IDENTITIES__BOT__TOKEN", pat)
    monkeypatch.setenv("SWARM_IDENTITIES__BOT__BOT_LOGIN", "octo-bot")
    monkeypatch.setenv("SWARM_IDENTITIES__FILEBOT__KIND", "bot_pat")
    monkeypatch.setenv("SWARM_IDENTITIES__FILEBOT__TOKEN_FILE", str(token_file))
    monkeypatch.setenv("SWARM_IDENTITIES__FILEBOT__BOT_LOGIN", "octo-bot2")
    monkeypatch.setenv("ANTHROPIC_API_KEY", api_key)
    load_settings()
    for value in (pat, pat_file_value, api_key):
        for text in (value, f"x{value}y", json.dumps({"v": f"\n{value}"}), f"plain={value}"):
            assert value not in redact(text)
        assert value not in repr(redact_obj({"list": [value.encode()], "set": {value}}))


def test_an_app_key_file_is_redacted_line_by_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    pem = (
        rsa.generate_private_key(public_exponent=65537, key_size=2048)
        .private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
        .decode()
    )
    key_file = tmp_path / "app.pem"
    key_file.write_text(pem)
    monkeypatch.setenv("SWARM_APP_ID", "1001")
    monkeypatch.setenv("SWARM_APP_INSTALLATION_ID", "2001")
    monkeypatch.setenv("SWARM_APP_PRIVATE_KEY_FILE", str(key_file))
    load_settings()
    body = [line for line in pem.splitlines() if not line.startswith("-----")]
    middle = body[len(body) // 2]
    assert middle not in redact(f"leaked line: {middle}")
    assert middle not in redact(json.dumps({"quote": "\n".join(body[3:6])}))
