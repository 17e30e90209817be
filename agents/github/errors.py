"""Errors the gateway raises. Messages name what happened; they never carry a token."""

from __future__ import annotations

from agents.ratelimit.pause import Paused
from agents.transport.errors import CredentialRefused


class IdentityPaused(Paused):
    """The identity may not call GitHub until ``until``; the parent flow reports how long the
    identity is out."""

    def __init__(self, identity: str, until: float, reason: str, *, now: float | None = None):
        self.identity = identity
        super().__init__(f"identity {identity}", until, reason, now=now)


class GraphQLNotAllowed(ValueError):
    """A GraphQL operation outside the REST-first allow-list; refused before anything is sent."""


class UnsafePath(ValueError):
    """A repository path or name that could leave its route (``..``, absolute, encoded or
    backslash traversal, control characters); refused before anything is sent."""


class GitHubApiError(Exception):
    """GitHub answered with an error status (after any retries the policy allows)."""

    def __init__(self, status: int, method: str, route: str, message: str) -> None:
        self.status = status
        self.method = method
        self.route = route
        self.message = message
        super().__init__(f"GitHub {method} {route} failed with {status}: {message}")


class TokenRefused(CredentialRefused):
    """The identity had no token (or one of the wrong kind): nothing was sent, and nothing falls
    back to another credential.

    No answer after the allowed retries is the transport's
    :class:`~agents.transport.errors.GitHubUnreachable`; a 5xx after them, a
    :class:`GitHubApiError`.
    """
