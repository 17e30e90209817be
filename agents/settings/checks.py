"""Checks of setting values that flags share (``--repo`` and ``SWARM_REPOS`` are one shape).

Each returns what is wrong in words, or None. None of them repeats a secret value: a store URL
may carry a password, so it is judged by its shape and never quoted.
"""

from __future__ import annotations

import base64
import binascii
import re

STORE_BACKENDS = ("sqlite", "postgresql")
SEALING_KEY_BYTES = 32
_URL_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_REPO_PART = re.compile(r"^[A-Za-z0-9_.-]+$")


def repo_problem(repo: str) -> str | None:
    """What is wrong with an ``OWNER/NAME`` a person typed."""
    owner, _, name = repo.partition("/")
    if not (owner and name and _REPO_PART.match(owner) and _REPO_PART.match(name)):
        return f"{repo!r} is not OWNER/NAME (e.g. acme/widgets)"
    return None


def store_url_problem(url: str) -> str | None:
    """A SQLAlchemy URL of a backend the store supports; judged without quoting it."""
    scheme = _URL_SCHEME.match(url.strip())
    if scheme is None:
        return (
            "not a database URL (expected postgresql+psycopg://USER@HOST/DB or "
            "sqlite:////PATH/swarm.db; the value is not shown, it may hold a password)"
        )
    backend = scheme.group(1).split("+", 1)[0].lower()
    if backend not in STORE_BACKENDS:
        return f"backend {backend!r} is not supported; use postgresql+psycopg:// or sqlite:///"
    return None


def sealing_key_bytes(text: str) -> bytes:
    """The key's bytes, or b"" when ``text`` is not urlsafe base64 (padding optional)."""
    text = text.strip()
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return b""


def sealing_key_problem(text: str) -> str | None:
    if len(sealing_key_bytes(text)) != SEALING_KEY_BYTES:
        return (
            "must be 32 random bytes, urlsafe base64 encoded (leave it unset to generate one "
            "per run)"
        )
    return None
