"""Secret redaction: one rule table used for store writes, log records and Prefect artifacts.

Every rule replaces what it finds with ``[REDACTED:<kind>]``. Rules are ordered so that the
most specific ones (PEM blocks, JWTs, GitHub tokens) claim their text before the generic
``key=value`` and base64 rules look at it; running :func:`redact` twice changes nothing more.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

MARK_PREFIX = "[REDACTED:"


def _mark(kind: str) -> str:
    return f"{MARK_PREFIX}{kind}]"


# Names whose *value* is a secret wherever they appear as a key (JSON, YAML, query, env).
# A key matches when it ends with one of these words, so ``input_tokens`` or
# ``token_fingerprint`` stay readable while ``GITHUB_TOKEN`` or ``client_secret`` do not.
_SECRET_KEY_WORDS = (
    r"password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|private[_-]?key"
    r"|access[_-]?key|secret[_-]?key|credentials?|authorization|cookie|session[_-]?id"
    r"|client[_-]?secret|signature"
)
_SECRET_KEY_RE = re.compile(rf"(?i)^(?:.*[_\-.])?(?:{_SECRET_KEY_WORDS})$")

_B64_RUN = re.compile(r"[A-Za-z0-9+/_\-]{120,}={0,2}")


@dataclass(frozen=True)
class Rule:
    """One kind of secret: a pattern, how to rewrite a match, and a cheap pre-check.

    ``needs`` lists lowercase substrings of which at least one must occur for the pattern to
    possibly match; most text contains none, and skipping the regex keeps redaction cheap
    enough to run on every stored event.
    """

    kind: str
    pattern: re.Pattern[str]
    replace: Callable[[re.Match[str]], str]
    needs: tuple[str, ...] = ()


def _whole(kind: str) -> Callable[[re.Match[str]], str]:
    return lambda _m: _mark(kind)


def _keep_group1(kind: str) -> Callable[[re.Match[str]], str]:
    return lambda m: m.group(1) + _mark(kind)


def _quoted_value(m: re.Match[str]) -> str:
    return f"{m.group('head')}{m.group('q')}{_mark('secret')}{m.group('q')}"


def _unquoted_value(m: re.Match[str]) -> str:
    return f"{m.group('head')}{_mark('secret')}"


def _looks_like_blob(run: str) -> bool:
    # Long paths and snake_case names are made of the same characters as base64; real encoded
    # data mixes cases and digits and has few slashes.
    body = run.rstrip("=")
    has_mix = (
        any(c.isupper() for c in body)
        and any(c.islower() for c in body)
        and any(c.isdigit() for c in body)
    )
    return has_mix and body.count("/") * 16 <= len(body)


def _blob(m: re.Match[str]) -> str:
    return _mark("base64") if _looks_like_blob(m.group(0)) else m.group(0)


_TOKEN_TAIL = r"[A-Za-z0-9_]+(?:[.\-][A-Za-z0-9_]+)*"
_URL_SECRET_PARAMS = (
    r"token|access_token|id_token|refresh_token|code|signature|sig|key|api_key|auth|otp"
    r"|magic|login_token|session|password|secret|X-Amz-Signature|X-Amz-Credential"
)

_HEADER_NEEDS = ("authorization", "cookie", "x-api-key", "x-github-token")
_SECRET_NEEDS = (
    "pass",
    "pwd",
    "secret",
    "token",
    "key",
    "credential",
    "authorization",
    "cookie",
    "session",
    "signature",
)

RULES: tuple[Rule, ...] = (
    Rule(
        "private-key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY-----"
            r"|[A-Za-z0-9+/=\s\\n]*)",
            re.DOTALL,
        ),
        _whole("private-key"),
        needs=("private key",),
    ),
    Rule(
        "jwt",
        re.compile(r"\beyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*"),
        _whole("jwt"),
        needs=("eyj",),
    ),
    Rule(
        "github-token",
        re.compile(rf"\b(?:gh[pousr]_|github_pat_){_TOKEN_TAIL}"),
        _whole("github-token"),
        needs=("gh", "github_pat_"),
    ),
    Rule(
        "anthropic-key",
        re.compile(r"\bsk-ant-[A-Za-z0-9_\-]+"),
        _whole("anthropic-key"),
        needs=("sk-ant-",),
    ),
    Rule(
        "api-key",
        re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_\-]{20,}"),
        _whole("api-key"),
        needs=("sk-",),
    ),
    Rule(
        "header",
        re.compile(
            r"(?im)^([ \t]*(?:Authorization|Proxy-Authorization|Cookie|Set-Cookie|X-Api-Key"
            r"|X-GitHub-Token)[ \t]*:[ \t]*)(?!\[REDACTED:)\S.*$"
        ),
        _keep_group1("header"),
        needs=_HEADER_NEEDS,
    ),
    Rule(
        "header",
        # Mid-line forms (curl -H "...", dict reprs): the scheme word is kept, the credential goes.
        re.compile(
            r"(?i)\b((?:Proxy-)?Authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
            r"(?:(?:Bearer|Basic|token|Digest)[ \t]+)?)(?!\[REDACTED:)[^\s\"',;]+"
        ),
        _keep_group1("header"),
        needs=_HEADER_NEEDS,
    ),
    Rule(
        "bearer",
        re.compile(r"(?i)\b(Bearer[ \t]+)(?!\[REDACTED:)[A-Za-z0-9\-._~+/]{8,}=*"),
        _keep_group1("bearer"),
        needs=("bearer",),
    ),
    Rule(
        "basic-auth",
        # Case-sensitive and digit-or-padding required, so prose ("Basic understanding") stays.
        re.compile(r"\b(Basic[ \t]+)(?=[A-Za-z+/]*[0-9=])[A-Za-z0-9+/]{8,}=*"),
        _keep_group1("basic-auth"),
        needs=("basic",),
    ),
    Rule(
        "url-credentials",
        re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s:@\[\]]+:[^/\s@\[\]]+@"),
        lambda m: f"{m.group(1)}{_mark('url-credentials')}@",
        needs=("@",),
    ),
    Rule(
        "magic-link",
        re.compile(rf"(?i)([?&#](?:{_URL_SECRET_PARAMS})=)(?!\[REDACTED:)[^&\s#\"'<>\]]+"),
        _keep_group1("magic-link"),
        needs=("=",),
    ),
    Rule(
        "secret",
        re.compile(
            rf"(?i)(?P<head>(?P<kq>[\"']?)\b[\w.\-]*(?:{_SECRET_KEY_WORDS})(?P=kq)[ \t]*[:=][ \t]*)"
            r"(?P<q>[\"'])(?!\[REDACTED:)(?P<v>[^\"'\n]+)(?P=q)"
        ),
        _quoted_value,
        needs=_SECRET_NEEDS,
    ),
    Rule(
        "secret",
        re.compile(
            rf"(?i)(?P<head>\b[\w.\-]*(?:{_SECRET_KEY_WORDS})[ \t]*[:=][ \t]*)"
            # Skip code: dotted names, calls, subscripts and literals are not secret values.
            r"(?!\[REDACTED:)(?![A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b)"
            r"(?!(?:None|True|False|null|true|false)\b)"
            r"(?P<v>[A-Za-z0-9_\-.+/~=]+)(?![\w(\[.])"
        ),
        _unquoted_value,
        needs=_SECRET_NEEDS,
    ),
    Rule("base64", _B64_RUN, _blob),
)


# Pre-check: which rules can possibly match, from plain substring tests on the lowered text
# (far cheaper than running every pattern on text that holds no secret at all).
_NEEDS = tuple((i, frozenset(rule.needs)) for i, rule in enumerate(RULES) if rule.needs)
_ALL_NEEDLES = tuple(sorted({n for rule in RULES for n in rule.needs}))
# Rules without a pre-check (only the base64 rule) cannot match short text.
_ALWAYS = tuple(i for i, rule in enumerate(RULES) if not rule.needs)
_B64_MIN = 120


def redact(text: str) -> str:
    """Return ``text`` with every secret the rule table knows replaced by a marker."""
    if not text:
        return text
    lowered = text.lower()
    present = {n for n in _ALL_NEEDLES if n in lowered}
    woken = [i for i, needs in _NEEDS if not needs.isdisjoint(present)] if present else []
    if len(text) >= _B64_MIN:
        woken = sorted((*woken, *_ALWAYS))
    for i in woken:
        rule = RULES[i]
        text = rule.pattern.sub(rule.replace, text)
    return text


@functools.lru_cache(maxsize=4096)
def _redact_key(key: str) -> str:
    # Mapping keys repeat endlessly ("text", "name", "output"): remember their redaction.
    return redact(key)


def is_secret_key(key: str) -> bool:
    """True when a mapping key names a secret (``token``, ``client_secret``, ``Authorization``)."""
    return bool(_SECRET_KEY_RE.match(key))


def redact_obj(obj: Any) -> Any:
    """Redact strings inside dicts, lists and tuples; string values under secret keys go whole."""
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, Mapping):
        out: dict[Any, Any] = {}
        for key, value in obj.items():
            if isinstance(key, str) and is_secret_key(key) and isinstance(value, str) and value:
                out[key] = value if value.startswith(MARK_PREFIX) else _mark("secret")
            else:
                out[_redact_key(key) if isinstance(key, str) else key] = redact_obj(value)
        return out
    if isinstance(obj, list):
        return [redact_obj(item) for item in obj]
    if isinstance(obj, tuple):
        return tuple(redact_obj(item) for item in obj)
    return obj


def fingerprint(secret: str) -> str:
    """A short, non-reversible id for a credential, safe to store and compare."""
    return "sha256:" + hashlib.sha256(secret.encode("utf-8")).hexdigest()[:16]


class RedactingFilter(logging.Filter):
    """Rewrites a record's message, arguments and traceback text through :func:`redact`."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string must not leak the raw args either
            message = f"{record.msg!s} {record.args!r}"
        record.msg = redact(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


_FILTER = RedactingFilter()


def install_log_redaction(logger_names: Iterable[str] = ("",)) -> RedactingFilter:
    """Attach the redacting filter to the named loggers and to every handler they hold.

    Logger filters only see records logged on that exact logger, so handlers (which see
    propagated records too) get the filter as well. Installing twice is harmless.
    """
    for name in logger_names:
        logger = logging.getLogger(name or None)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
        for handler in logger.handlers:
            if _FILTER not in handler.filters:
                handler.addFilter(_FILTER)
    return _FILTER
