"""Reading GitHub's answers: error messages, GraphQL rate limiting, exact GraphQL cost."""

from __future__ import annotations

from collections.abc import Mapping

import httpx


def error_message(response: httpx.Response) -> str | None:
    try:
        body = response.json()
    except ValueError:
        return response.text[:200] or None
    if isinstance(body, Mapping):
        message = body.get("message")
        return str(message) if message is not None else None
    return None


def graphql_rate_limited(response: httpx.Response) -> bool:
    try:
        body = response.json()
    except ValueError:
        return False
    errors = body.get("errors") if isinstance(body, Mapping) else None
    return isinstance(errors, list) and any(
        isinstance(e, Mapping) and e.get("type") == "RATE_LIMITED" for e in errors
    )


def graphql_cost(response: httpx.Response | None, estimate: int) -> int:
    """The exact cost when the query asked for ``rateLimit { cost }``, else the estimate."""
    if response is None or response.is_error:
        return estimate
    try:
        cost = response.json()["data"]["rateLimit"]["cost"]
    except (ValueError, KeyError, TypeError):
        return estimate
    return int(cost) if isinstance(cost, int) else estimate
