"""Errors the gateway raises. Messages name what happened; they never carry a token."""

from __future__ import annotations

from datetime import UTC, datetime


class IdentityPaused(Exception):
    """The identity may not call GitHub until ``until`` (epoch seconds on the throttle's clock).

    Raised instead of sleeping when the pause is longer than ``max_inline_wait`` so the parent flow
    can report how long the identity is out rather than block a worker silently.
    """

    def __init__(self, identity: str, until: float, reason: str, *, now: float | None = None):
        self.identity = identity
        self.until = until
        self.reason = reason
        when = datetime.fromtimestamp(until, tz=UTC).isoformat(timespec="seconds")
        wait = "" if now is None else f" (in {max(0.0, until - now):.0f} s)"
        super().__init__(f"identity {identity} paused until {when}{wait}: {reason}")

    @property
    def until_datetime(self) -> datetime:
        return datetime.fromtimestamp(self.until, tz=UTC)


class GraphQLNotAllowed(ValueError):
    """A GraphQL operation outside the REST-first allow-list; refused before anything is sent."""


class GitHubApiError(Exception):
    """GitHub answered with an error status (after any retries the policy allows)."""

    def __init__(self, status: int, method: str, route: str, message: str) -> None:
        self.status = status
        self.method = method
        self.route = route
        self.message = message
        super().__init__(f"GitHub {method} {route} failed with {status}: {message}")


class GitHubUnavailable(Exception):
    """GitHub could not be reached or kept failing with 5xx/timeouts after the allowed retries."""


class TokenRefused(GitHubUnavailable):
    """The identity had no token (or one of the wrong kind): nothing was sent, and nothing falls
    back to another credential."""
