"""The one redaction rule table: planted secrets never survive, ordinary text always does."""

from __future__ import annotations

import base64
import io
import logging
import re
import string
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.redact import (
    RedactingFilter,
    fingerprint,
    install_log_redaction,
    redact,
    redact_obj,
)
from agents.redact.rules import _GAP, _TOKEN_TAIL, RULES, START, _spaced

ALNUM = string.ascii_letters + string.digits
tail = st.text(alphabet=ALNUM, min_size=1, max_size=60)


@st.composite
def github_tokens(draw: st.DrawFn) -> str:
    prefix = draw(st.sampled_from(["ghs_", "ghp_", "gho_", "ghu_", "ghr_", "github_pat_"]))
    parts = draw(st.lists(st.text(alphabet=ALNUM + "_", min_size=1, max_size=180), min_size=1))
    return prefix + ".".join(parts)


@st.composite
def jwts(draw: st.DrawFn) -> str:
    def seg() -> str:
        raw = draw(st.binary(min_size=4, max_size=80))
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    header = base64.urlsafe_b64encode(b'{"alg":"RS256","typ":"JWT"}').decode().rstrip("=")
    return f"{header}.{seg()}.{seg()}"


@st.composite
def pem_keys(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["RSA ", "EC ", "", "OPENSSH "]))
    body = base64.b64encode(draw(st.binary(min_size=30, max_size=400))).decode()
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN {kind}PRIVATE KEY-----\n{lines}\n-----END {kind}PRIVATE KEY-----"


anthropic_keys = tail.map(lambda t: "sk-ant-api03-" + t)
blobs = st.binary(min_size=120, max_size=600).map(lambda b: base64.b64encode(b).decode())

secret_values = st.one_of(github_tokens(), jwts(), pem_keys(), anthropic_keys)

# Each planted form, with the fragment that must not survive.
planted = st.one_of(
    secret_values.map(lambda s: (s, s)),
    tail.map(lambda t: (f"Authorization: Bearer x{t}9", f"x{t}9")),
    tail.map(lambda t: (f"Cookie: session=z{t}", f"z{t}")),
    tail.map(lambda t: (f"password=p{t}0", f"p{t}0")),
    # The digit keeps a short planted value from matching the key's own name ("ke" in api_key).
    tail.map(lambda t: (f'{{"api_key": "k{t}7"}}', f"k{t}7")),
    tail.map(lambda t: (f"https://app.test/login?email=a@b.c&token=m{t}1", f"m{t}1")),
    blobs.filter(lambda b: any(c.isdigit() for c in b)).map(lambda b: (b, b)),
)

WORDS = (
    "the review found a missing test for this bug fix please add coverage and rename the"
    " helper token budget cost latency worker identity cache prefix run flow"
)
words = st.sampled_from(WORDS.split())
prose = st.lists(words, min_size=1, max_size=30).map(" ".join)
git_shas = st.binary(min_size=20, max_size=20).map(bytes.hex)
uuids = st.uuids().map(str)
paths = st.lists(
    st.text(alphabet=string.ascii_lowercase + string.digits + "_-.", min_size=1, max_size=20),
    min_size=1,
    max_size=12,
).map(lambda segs: "/" + "/".join(segs))
code_lines = st.sampled_from(
    [
        "def get_token(self) -> str:",
        "    return self._client.token",
        "token = self.token",
        "max_tokens=1024, temperature=0",
        "headers = {'Accept': 'application/json'}",
        "for i in range(10): total += cost[i]",
        "if secret is None: raise ValueError('missing secret')",
        "usage.input_tokens + usage.cache_read_input_tokens",
        "password = os.environ['DB_PASSWORD']",
    ]
)
harmless = st.one_of(prose, git_shas, uuids, paths, code_lines)


@given(planted, prose, prose)
@settings(max_examples=300)
def test_planted_secrets_never_survive(pair: tuple[str, str], before: str, after: str) -> None:
    text, fragment = pair
    out = redact(f"{before} {text} {after}")
    assert fragment not in out
    assert "[REDACTED:" in out


@given(st.lists(harmless, min_size=1, max_size=8).map("\n".join))
@settings(max_examples=300)
def test_shas_uuids_paths_prose_and_code_survive_unchanged(text: str) -> None:
    assert redact(text) == text


@given(planted, prose)
def test_redaction_is_idempotent(pair: tuple[str, str], context: str) -> None:
    once = redact(f"{context} {pair[0]}")
    assert redact(once) == once


def test_long_dotted_installation_token_is_redacted_whole() -> None:
    token = "ghs_" + "A1b2" * 30 + "." + "z9Y8" * 95 + "." + "q" * 20
    assert len(token) > 500
    assert redact(f"clone with {token}.") == "clone with [REDACTED:github-token]."


def test_each_kind_names_itself_in_the_marker() -> None:
    assert redact("ghp_abc") == "[REDACTED:github-token]"
    assert redact("sk-ant-api03-xyz") == "[REDACTED:anthropic-key]"
    assert redact("Set-Cookie: sid=abc; HttpOnly") == "Set-Cookie: [REDACTED:header]"
    assert (
        redact("see https://h.test/m?code=abc123")
        == "see https://h.test/m?code=[REDACTED:magic-link]"
    )
    assert redact("git clone https://u:pw@h.test/r") == (
        "git clone https://[REDACTED:url-credentials]@h.test/r"
    )


def test_redact_obj_walks_nested_values_and_blanks_secret_keys() -> None:
    obj = {
        "headers": {"Authorization": "token abc", "Accept": "json"},
        "items": ["ghs_abc", 3, None, ("sk-ant-x",)],
        "input_tokens": 12,
        "token_fingerprint": fingerprint("ghs_abc"),
    }
    out = redact_obj(obj)
    assert out["headers"] == {"Authorization": "[REDACTED:secret]", "Accept": "json"}
    assert out["items"] == ["[REDACTED:github-token]", 3, None, ("[REDACTED:anthropic-key]",)]
    assert out["input_tokens"] == 12
    assert out["token_fingerprint"] == obj["token_fingerprint"]


def test_fingerprint_is_short_stable_and_does_not_contain_the_secret() -> None:
    secret = "ghs_" + uuid.uuid4().hex
    fp = fingerprint(secret)
    assert fp == fingerprint(secret)
    assert fp != fingerprint(secret + "x")
    assert fp.startswith("sha256:") and len(fp) == 23
    assert secret[4:] not in fp


@pytest.fixture
def captured_logger() -> tuple[logging.Logger, io.StringIO]:
    logger = logging.getLogger(f"test.redact.{uuid.uuid4().hex}")
    logger.propagate = False
    stream = io.StringIO()
    logger.addHandler(logging.StreamHandler(stream))
    logger.setLevel(logging.DEBUG)
    return logger, stream


def test_log_filter_redacts_message_args_and_traceback(
    captured_logger: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = captured_logger
    install_log_redaction([logger.name])
    logger.info("minted %s for %s", "ghs_secretvalue", "octo")
    try:
        raise RuntimeError("bad key sk-ant-api03-leak")
    except RuntimeError:
        logger.exception("failed with header Authorization: Bearer abcdefgh12")
    text = stream.getvalue()
    assert "ghs_secretvalue" not in text
    assert "sk-ant-api03-leak" not in text
    assert "abcdefgh12" not in text
    assert "minted [REDACTED:github-token] for octo" in text
    assert "RuntimeError" in text


def test_filter_on_a_handler_covers_records_from_child_loggers() -> None:
    parent = logging.getLogger(f"test.redact.parent{uuid.uuid4().hex}")
    parent.propagate = False
    stream = io.StringIO()
    parent.addHandler(logging.StreamHandler(stream))
    install_log_redaction([parent.name])
    logging.getLogger(parent.name + ".child").warning("token=ghp_abcdef")
    assert "ghp_abcdef" not in stream.getvalue()
    assert isinstance(parent.handlers[0].filters[0], RedactingFilter)


# Text made of what a key: value pattern reads: key words and their pieces, separators, quotes,
# blanks, line breaks, code and values.
KEY_PIECES = [
    "token",
    "Password",
    "api-key",
    "client_secret",
    "KEY",
    "x",
    "a.",
    "1",
    "(",
    "None",
    ":",
    "=",
    "==",
    '"',
    "'",
    " ",
    "\t",
    "\n",
    "[REDACTED:secret]",
    "os.environ",
    "_",
]
key_text = st.lists(st.sampled_from(KEY_PIECES), max_size=40).map("".join)


@given(key_text)
@settings(max_examples=500)
def test_key_rules_find_from_separators_what_a_scan_of_every_position_finds(text: str) -> None:
    for rule in RULES:
        if rule.matches is not None:
            found = [(m.span(), m.groupdict()) for m in rule.matches(rule.pattern, text)]
            assert found == [(m.span(), m.groupdict()) for m in rule.pattern.finditer(text)]


def test_a_key_far_from_its_separator_and_a_key_after_a_value_are_both_redacted() -> None:
    spaced = "token" + " " * 300 + ": s3cr3tvalue"
    assert redact(spaced) == "token" + " " * 300 + ": [REDACTED:secret]"
    assert redact('password="p1" secret = v2 next') == (
        'password="[REDACTED:secret]" secret = [REDACTED:secret] next'
    )


# Text made of what a prefix split by blanks is made of, and what may come before one.
SPACED_PIECES = [*"gGhHpPsSkKaAnNtTiIuUbB_- \t\n\\x0ſK", "\\n", "\\u00e9", "github", "_pat_"]
SPACED_PIECES += ["gh", "GH", "p_", "g h", "s_", "sk", "-ant-", "sk-", "ant", "a1", "Xy"]
spaced_text = st.lists(st.sampled_from(SPACED_PIECES), max_size=30).map("".join)


@given(spaced_text)
@settings(max_examples=500)
def test_spaced_prefix_rules_match_where_the_lookahead_form_matched(text: str) -> None:
    # The form before the class was moved to the front: a lookahead for the first character,
    # the start, then every prefix spelled with gaps.
    github_prefixes = [_spaced("g", "h", "[pousr]", "_"), _spaced(*"github", "_", *"pat", "_")]
    prefixes = "|".join([*github_prefixes, _spaced("s", "k", "-", *"ant", "-")])
    spaced = rf"{START}(?i:{prefixes}){_GAP}(?=[A-Za-z0-9_\-])"
    github = re.compile(rf"(?=[gG]){spaced}(?P<tail>{_TOKEN_TAIL})")
    anthropic = re.compile(rf"(?=[sS]){spaced}(?P<tail>[A-Za-z0-9_\-]++)")
    for before, rule in ((github, RULES[4]), (anthropic, RULES[5])):
        assert [m.span() for m in rule.pattern.finditer(text)] == [
            m.span() for m in before.finditer(text)
        ]
