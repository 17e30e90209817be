"""What the transport raises. Messages name the API, method and path, never a header or a
credential, and carry no chained exception (the wrapped httpx error holds the request and its
Authorization header)."""

from __future__ import annotations

from typing import Literal

from agents.errors import SwarmError

FailureKind = Literal["timed out", "could not connect"]


class TransportError(Exception):
    """Base for transport failures."""


class GitHubUnreachable(TransportError, SwarmError):
    """No HTTP answer at all: a timeout or a connection failure (nothing to judge a status by).

    The one definition of "GitHub could not be reached", whoever asked: the identity layer lets
    it through as it is, and the gateway raises it once its retries are spent. A person can act
    on it (the API URL, the network, GitHub's status page), so it is a :class:`SwarmError`.
    """

    def __init__(self, message: str, *, kind: FailureKind, origin: str) -> None:
        super().__init__(message)
        self.kind: FailureKind = kind
        self.origin = origin


class CredentialRefused(TransportError):
    """The auth strategy had no credential, or one of the wrong kind: nothing was sent.

    Never falls back to another credential (the host's ``GH_TOKEN``, ``gh``, netrc, ...).
    """
