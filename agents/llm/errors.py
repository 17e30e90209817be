"""Errors of the LLM layer. Messages say what happened and what to do; none carries the key."""

from __future__ import annotations

from agents.ratelimit.pause import Paused


class LLMError(Exception):
    """The model call failed; the message says why and what to do, and never holds the key."""


class LLMAuthError(LLMError):
    pass


class LLMRequestError(LLMError):
    """The provider refused the request itself (4xx other than auth and rate limits)."""


class LLMUnavailable(LLMError):
    """The provider could not be reached, or kept failing with 5xx, through every retry."""


class LLMPaused(LLMError, Paused):
    """The key may not call the model until ``until`` (epoch seconds on the throttle's clock).

    Raised instead of sleeping when the pause is longer than the inline wait, or when a call
    kept being refused: the worker ends ``paused`` and a later run picks the work up.
    """

    def __init__(self, until: float, reason: str, *, now: float | None = None) -> None:
        super().__init__("model calls", until, reason, now=now)


class LLMOverloaded(LLMPaused):
    """The provider stayed overloaded (529) through every backoff."""
