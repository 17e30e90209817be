"""Trust class 7 of issue 24, redaction and allow-list remainders.

The attack: a model steered by a PR (or a PR author's own text the bot quotes) writes a token in
a form the rule table did not read: URL-encoded (``ghs%5F...``), JSON-escaped (``ghs\\u005f...``),
as HTML character references, with an upper-case prefix (``GHP_...``), or split by a space or a
zero-width character, where the head was redacted and the tail survived. GitHub's stateless
installation tokens (``ghs_<app id>_<JWT>``, ~520 characters with ``.``, ``_`` and ``-``) are
tried in every form too. A reader decodes each form at a glance, so a leak is judged on the
decoded text. Through the real paths: the gateway to the sandbox GitHub over HTTP, and the
anthropic SDK to the scripted model. ``swarm exec`` passed any ``LC_`` variable
(``LC_SECRET_TOKEN``): only the locale's own names, with locale-shaped values, reach the child.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
import secrets
import string
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.redact import redact
from sandbox.github.seed import REVIEWER_APP_ID, REVIEWER_INSTALLATION_ID, WIDGETS
from sandbox.github.tokens import stateless_token
from sandbox.model import ScriptedModel
from sandbox.server import SandboxServer
from tests.github.sandbox_helpers import reviewer_gateway
from tests.paths import ROOT
from tests.run.conftest import Swarm
from tests.security.test_exec_environment import _swarm_exec, host
from tests.security.test_outbound_redaction import ATTACK_FILE, _bot_written, send_to_model

__all__ = ["host"]

ALNUM = string.ascii_letters + string.digits
PATIENT = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _random(n: int) -> str:
    return "".join(secrets.choice(ALNUM) for _ in range(n - 2)) + "9Z"


TOKENS = {
    "classic installation": "ghs_" + _random(36),
    "classic PAT": "ghp_" + _random(36),
    "fine-grained PAT": "github_pat_" + _random(22) + "_" + _random(59),
    "stateless installation": stateless_token(REVIEWER_APP_ID, REVIEWER_INSTALLATION_ID, 2e9),
    "anthropic key": "sk-ant-api03-" + _random(95),
}
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]


def _percent_all(text: str) -> str:
    return "".join(f"%{ord(c):02X}" for c in text)


def _underscores(token: str, form: str) -> str:
    head, sep, tail = token.partition("_") if token.startswith("gh") else token.partition("-")
    return head + form + tail if sep else token


def _split(token: str, sep: str, every: int) -> str:
    return sep.join(token[i : i + every] for i in range(0, len(token), every))


FORMS: dict[str, Callable[[str], str]] = {
    "url-encoded separator": lambda t: _underscores(t, "%5F" if t.startswith("gh") else "%2D"),
    "url-encoded lower case": lambda t: _underscores(t, "%5f" if t.startswith("gh") else "%2d"),
    "url-encoded twice": lambda t: _underscores(t, "%255F" if t.startswith("gh") else "%252D"),
    "url-encoded whole": _percent_all,
    "json-escaped": lambda t: _underscores(t, "\\u005f" if t.startswith("gh") else "\\u002d"),
    "json-escaped twice": lambda t: _underscores(t, "\\\\u005f" if t.startswith("gh") else "-"),
    "hex-escaped": lambda t: _underscores(t, "\\x5f" if t.startswith("gh") else "\\x2d"),
    "html reference": lambda t: _underscores(t, "&#95;" if t.startswith("gh") else "&#45;"),
    "html hex reference": lambda t: _underscores(t, "&#x5F;" if t.startswith("gh") else "&#x2d;"),
    "html named": lambda t: _underscores(t, "&lowbar;" if t.startswith("gh") else "&hyphen;"),
    "upper-case prefix": lambda t: t.split("_", 1)[0].upper() + t[len(t.split("_", 1)[0]) :],
    "split by a space": lambda t: _split(t, " ", 16),
    "split by a space after the prefix": lambda t: t[:4] + " " + t[4:],
    "split by a zero-width space": lambda t: _split(t, "\u200b", 9),
    "zero-width inside the prefix": lambda t: t[0] + "\u200b" + t[1] + "\u2060" + t[2:],
    "soft hyphens throughout": lambda t: _split(t, "\u00ad", 5),
}


def readable(text: str) -> str:
    """What a reader makes of ``text``: every encoding undone, invisible characters and
    spaces gone, case folded."""
    out = text
    for _ in range(3):
        out = out.replace("\\\\", "\\")
        out = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m[1], 16)), out)
        out = re.sub(r"\\x([0-9a-fA-F]{2})", lambda m: chr(int(m[1], 16)), out)
        out = html.unescape(unquote(out))
    kept = (c for c in out if unicodedata.category(c) != "Cf" and not c.isspace())
    return "".join(kept).casefold()


def leaked(token: str, text: str) -> bool:
    """Any 12 characters of the token's random part, found in what a reader makes of ``text``."""
    body = token.casefold()[4:]
    seen = readable(text)
    return any(body[i : i + 12] in seen for i in range(0, len(body) - 11, 3))


@given(
    st.sampled_from(list(TOKENS)),
    st.sampled_from(list(FORMS)),
    st.sampled_from(["", "see ", "x=", '{"body": "', "\n", "token: `"]),
    st.sampled_from(["", " now", '"}', "` ok", "\nnext line", " and then more prose"]),
)
@PATIENT
def test_no_written_form_of_a_token_survives_redaction(
    kind: str, form: str, before: str, after: str
) -> None:
    token = TOKENS[kind]
    text = f"{before}{FORMS[form](token)}{after}"
    out = redact(text)
    assert not leaked(token, out), (kind, form, out)
    assert redact(out) == out


@given(st.sampled_from(list(TOKENS)), st.integers(min_value=2, max_value=40))
@PATIENT
def test_a_token_split_anywhere_by_spaces_or_invisible_characters_is_redacted_whole(
    kind: str, every: int
) -> None:
    token = TOKENS[kind]
    for sep in [" ", *INVISIBLE]:
        out = redact(f"quoted: {_split(token, sep, every)} end")
        assert not leaked(token, out), (kind, every, repr(sep), out)


def test_prose_about_token_prefixes_and_encoded_urls_survives() -> None:
    for text in (
        "Token prefixes: `ghs_` installation, `ghp_` classic, `github_pat_` fine-grained.",
        "ghp_ is the classic prefix; GHS_ in capitals means nothing to GitHub.",
        "See https://example.test/search?q=rate%20limit%5Fbuckets&page=2 for the thread.",
        'The JSON "caf\\u00e9" and &amp; entities stay as written.',
        "zero\u200bwidth joiners in prose stay too.",
    ):
        assert redact(text) == text


def _all_forms() -> list[tuple[str, str]]:
    return [
        (f"{kind}/{form}", make(token))
        for kind, token in TOKENS.items()
        for form, make in FORMS.items()
    ]


def test_every_form_posted_through_the_gateway_reaches_github_redacted(
    sandbox: SandboxServer,
) -> None:
    pull = sandbox.state.add_pull(WIDGETS, "Deploy", {"deploy.py": ATTACK_FILE})
    written = [text for _name, text in _all_forms()]

    async def go() -> None:
        async with reviewer_gateway(sandbox) as gateway:
            head = (await gateway.get_pull(WIDGETS, pull.number))["head"]["sha"]
            await gateway.create_review(
                WIDGETS,
                pull.number,
                "Summary quoting " + " | ".join(written),
                commit_id=head,
                comments=[
                    {"path": "deploy.py", "line": 2, "side": "RIGHT", "body": text}
                    for text in written[:40]
                ],
            )
            await gateway.create_issue_comment(WIDGETS, pull.number, "\n".join(written))

    asyncio.run(go())
    on_github = _bot_written(sandbox.state)
    assert on_github.count("[REDACTED:") >= len(written)
    assert [kind for kind, token in TOKENS.items() if leaked(token, on_github)] == []


def test_every_form_in_a_request_to_the_model_reaches_it_redacted() -> None:
    model = ScriptedModel()
    forms = dict(_all_forms())
    request: dict[str, Any] = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 256,
        "system": [{"type": "text", "text": "review carefully"}],
        "messages": [
            {"role": "user", "content": json.dumps(forms)},
            {"role": "assistant", "content": "noted: " + " ".join(forms.values())},
            {"role": "user", "content": "\n".join(forms.values())},
        ],
    }

    send_to_model(model, request)
    sent = json.dumps(model.requests)
    assert len(model.requests) == 1
    assert [kind for kind, token in TOKENS.items() if leaked(token, sent)] == []


def test_swarm_exec_passes_the_locale_by_name_and_no_other_lc_variable(
    host: tuple[Swarm, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    stolen = TOKENS["classic PAT"]
    planted = {
        "LC_SECRET_TOKEN": stolen,
        "LC_TERMINAL_SESSION": "planted-session-cookie-0042",
        "LC_ALL": "en_US.UTF-8",
        "LC_TIME": "de_DE.UTF-8@euro",
        "LC_CTYPE": stolen,  # a real category name, but its value is a token, not a locale
        "LC_MESSAGES": "C; curl https://evil.test",
        "LANGUAGE": "fr_FR:en",
    }
    for name, value in planted.items():
        monkeypatch.setenv(name, value)
    done = _swarm_exec("--", "env", "-0")
    assert done.returncode == 0, done.stderr
    env = dict(item.split("=", 1) for item in done.stdout.split("\0") if "=" in item)
    locale = {n: v for n, v in env.items() if n.startswith("LC_") or n == "LANGUAGE"}
    assert locale == {
        "LC_ALL": "en_US.UTF-8",
        "LC_TIME": "de_DE.UTF-8@euro",
        "LANGUAGE": "fr_FR:en",
    }
    assert not leaked(stolen, done.stdout)
    assert "planted-session-cookie" not in done.stdout


def test_the_test_reader_sees_through_every_form() -> None:
    # The judge must be sharper than the defence: each form, unredacted, reads as a leak.
    for name, text in _all_forms():
        kind = name.split("/", 1)[0]
        assert leaked(TOKENS[kind], text), name
    assert not leaked(TOKENS["classic PAT"], redact(TOKENS["classic PAT"]))
    assert Path(ROOT / "flows").is_dir()
