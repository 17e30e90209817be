"""How the identity layer names a credential without showing it, and what kind it is.

The kinds themselves are GitHub facts the transport's auth strategies also enforce, so they are
defined once in :mod:`agents.transport.credentials` and named here for the identity layer's users.
"""

from __future__ import annotations

from pydantic import SecretStr

from agents.redact import fingerprint as redact_fingerprint
from agents.transport.credentials import (
    BOT_PAT_KINDS,
    PERSONAL_KINDS,
    TokenKind,
    describe,
    token_kind,
    token_prefix,
)

__all__ = [
    "BOT_PAT_KINDS",
    "PERSONAL_KINDS",
    "TokenKind",
    "describe",
    "fingerprint",
    "token_kind",
    "token_prefix",
]


def fingerprint(token: SecretStr | str) -> str:
    """A stable, non-reversible name for a credential: ``sha256:`` plus 16 hex digits."""
    value = token.get_secret_value() if isinstance(token, SecretStr) else token
    return redact_fingerprint(value)
