"""What the transport raises. Messages name the API, method and path, never a header or a
credential, and carry no chained exception (the wrapped httpx error holds the request and its
Authorization header)."""

from __future__ import annotations

from typing import Literal

FailureKind = Literal["timed out", "could not connect"]


class TransportError(Exception):
    """Base for transport failures."""


class GitHubUnreachable(TransportError):
    """No HTTP answer at all: a timeout or a connection failure (nothing to judge a status by)."""

    def __init__(self, message: str, *, kind: FailureKind, origin: str) -> None:
        super().__init__(message)
        self.kind: FailureKind = kind
        self.origin = origin


class CredentialRefused(TransportError):
    """The auth strategy had no credential, or one of the wrong kind: nothing was sent.

    Never falls back to another credential (the host's ``GH_TOKEN``, ``gh``, netrc, ...).
    """
