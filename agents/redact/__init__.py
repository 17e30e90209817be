"""Secret redaction: one rule table (:mod:`agents.redact.rules`) plus the configured secret
values, used for store writes, log records, Prefect artifacts and every body sent to GitHub or
to the model.

Patterns catch known shapes; a configured secret of no known shape (a webhook secret, the
sealing key, a PAT of a new format) is caught because entry points register its value with
:func:`register_secret`. Running :func:`redact` twice changes nothing more.

- ``encoded.py``: Base64 in redaction: which runs look like encoded data, and decoding a run to look
  inside it
- ``rules.py``: The redaction rule table: what a secret looks like, and what replaces it
- ``shadow.py``: A decoded shadow of a text (URL, JSON and HTML escapes decoded, invisible
  characters dropped) whose spans map back to the text, for secrets written in those forms
"""

from __future__ import annotations

import functools
import hashlib
import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any

from agents.redact.encoded import SHORT_B64_RUN, decoded_text, mixed_classes
from agents.redact.rules import MARK_PREFIX, RULES, SECRET_KEY_RE, Rule, mark
from agents.redact.shadow import shadow_of

__all__ = [
    "MARK_PREFIX",
    "RedactingFilter",
    "fingerprint",
    "install_log_redaction",
    "is_secret_key",
    "redact",
    "redact_cached",
    "redact_obj",
    "register_secret",
]

# Pre-check: which rules can possibly match, from plain substring tests on the lowered text
# (far cheaper than running every pattern on text that holds no secret at all).
_NEEDS = tuple((i, frozenset(rule.needs)) for i, rule in enumerate(RULES) if rule.needs)
_ALL_NEEDLES = tuple(sorted({n for rule in RULES for n in rule.needs}))
_ALWAYS = tuple((i, rule.min_len) for i, rule in enumerate(RULES) if not rule.needs)
# The rules that find a secret by its shape alone, run again over the decoded shadow of a text
# that holds escapes or invisible characters (``ghs%5F...``, ``ghs\u005f...``, a zero-width
# space inside a token); the key=value and header rules need no shadow: their values are caught
# whatever they hold.
_SHADOWED = tuple(
    rule
    for rule in RULES
    if rule.kind in ("private-key", "jwt", "github-token", "anthropic-key", "api-key")
)
_SHORT_B64_MIN = 16
# Shorter values are words, not secrets: redacting them would shred ordinary text.
LITERAL_MIN = 8
_LINE_MIN = 16
_LITERAL = mark("configured-secret")
_literals: list[str] = []


def register_secret(value: str | bytes | None) -> None:
    """Redact ``value`` wherever it appears from now on, whatever its shape.

    A multi-line value (a PEM key) is registered line by line too, so a single line quoted
    anywhere is caught; so is its JSON-escaped whole. Armor lines (``-----BEGIN ...``) and lines
    with spaces are not: they are shared with every other key and with prose.
    """
    if value is None:
        return
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    forms = {text, text.strip(), text.strip().replace("\n", "\\n"), *_base64_forms(text.strip())}
    lines = [line.strip() for line in text.splitlines()] if "\n" in text.strip() else []
    forms.update(
        line
        for line in lines
        if len(line) >= _LINE_MIN and not line.startswith("-----") and not line.count(" ")
    )
    new = [f for f in forms if len(f) >= LITERAL_MIN and f not in _literals]
    if not new:
        return
    # Longest first: a whole value goes before the lines it is made of.
    _literals[:] = sorted([*_literals, *new], key=len, reverse=True)
    _redact_key.cache_clear()
    redact_cached.cache_clear()


def _base64_forms(text: str) -> set[str]:
    """A base64 key is also written padded or not, and in the other alphabet."""
    if not re.fullmatch(r"[A-Za-z0-9+/_\-]{16,}={0,2}", text):
        return set()
    body = text.rstrip("=")
    std = body.replace("-", "+").replace("_", "/")
    url = body.replace("+", "-").replace("/", "_")
    pad = "=" * (-len(body) % 4)
    return {std, url, std + pad, url + pad}


def _redact_literals(text: str) -> str:
    for literal in _literals:
        if literal in text:
            text = text.replace(literal, _LITERAL)
    return text


def _decoded_secret(m: re.Match[str]) -> str:
    run = m.group(0)
    # Only a probe: the run is redacted when what it decodes to holds a secret.
    if not mixed_classes(run, digits=False):
        return run
    decoded = decoded_text(run)
    if decoded is not None and redact(decoded) != decoded:
        return mark("base64")
    return run


def _extent(rule: Rule, text: str, m: re.Match[str]) -> int:
    return rule.end(text, m) - m.start() if rule.end is not None else len(m.group(0))


def _redact_shadowed(text: str) -> str:
    """Secrets found in the decoded shadow of ``text``, replaced where they are in ``text``."""
    shadow = shadow_of(text)
    if shadow is None:
        return text
    lowered = shadow.text.lower()
    spans: list[tuple[int, int, str]] = []
    for rule in _SHADOWED:
        if rule.needs and not any(n in lowered for n in rule.needs):
            continue
        at = 0
        # Not finditer: a token's match runs on over what may follow it (pieces of a split
        # token), and the text after its extent is searched again, as redact() does.
        while (m := rule.pattern.search(shadow.text, at)) is not None:
            extent = _extent(rule, shadow.text, m)
            at = m.start() + max(extent, 1)
            if not extent:
                continue  # a bare token prefix: a word about tokens
            start, stop = shadow.original_span(m.start(), m.start() + extent)
            spans.append((start, stop, rule.kind))
    if not spans:
        return text
    out: list[str] = []
    at = 0
    # Earliest first, the longest of those first: a JWT inside a stateless token goes with it.
    for start, stop, kind in sorted(spans, key=lambda s: (s[0], -s[1])):
        if stop <= at:
            continue
        out += [text[at:start], mark(kind)] if start >= at else []
        at = max(at, stop)
    out.append(text[at:])
    return "".join(out)


def redact(text: str) -> str:
    """Return ``text`` with every secret the rule table knows replaced by a marker."""
    if not text:
        return text
    if _literals:
        text = _redact_literals(text)
    text = _redact_shadowed(text)
    lowered = text.lower()
    present = {n for n in _ALL_NEEDLES if n in lowered}
    woken = [i for i, needs in _NEEDS if not needs.isdisjoint(present)] if present else []
    woken = sorted((*woken, *(i for i, min_len in _ALWAYS if len(text) >= min_len)))
    for i in woken:
        rule = RULES[i]
        text = rule.apply(text)
    if len(text) >= _SHORT_B64_MIN:
        text = SHORT_B64_RUN.sub(_decoded_secret, text)
    return text


@functools.lru_cache(maxsize=4096)
def _redact_key(key: str) -> str:
    # Mapping keys repeat endlessly ("text", "name", "output"): remember their redaction.
    return redact(key)


def is_secret_key(key: str) -> bool:
    """True when a mapping key names a secret (``token``, ``client_secret``, ``Authorization``)."""
    return bool(SECRET_KEY_RE.match(key))


def _redact_bytes(data: bytes) -> bytes:
    text = data.decode("utf-8", "surrogateescape")
    out = redact(text)
    return data if out == text else out.encode("utf-8", "surrogateescape")


def _redact_key_of(key: Any) -> Any:
    if isinstance(key, str):
        return _redact_key(key)
    return _redact_bytes(key) if isinstance(key, bytes) else key


def redact_obj(obj: Any) -> Any:
    """Redact strings and bytes inside dicts, lists, tuples and sets; a string or bytes value
    under a secret key (``token``, ``sealing_key``) goes whole."""
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, bytes | bytearray):
        return type(obj)(_redact_bytes(bytes(obj)))
    if isinstance(obj, Mapping):
        out: dict[Any, Any] = {}
        for key, value in obj.items():
            name = key.decode("utf-8", "replace") if isinstance(key, bytes) else key
            secret = isinstance(name, str) and is_secret_key(name)
            if secret and isinstance(value, str | bytes | bytearray) and value:
                keep = isinstance(value, str) and value.startswith(MARK_PREFIX)
                out[_redact_key_of(key)] = value if keep else mark("secret")
            else:
                out[_redact_key_of(key)] = redact_obj(value)
        return out
    if isinstance(obj, list):
        return [redact_obj(item) for item in obj]
    if isinstance(obj, tuple):
        return tuple(redact_obj(item) for item in obj)
    if isinstance(obj, set | frozenset):
        return type(obj)(redact_obj(item) for item in obj)
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


@functools.lru_cache(maxsize=1024)
def redact_cached(text: str) -> str:
    """:func:`redact` for text sent again and again (a conversation's history on every call)."""
    return redact(text)
