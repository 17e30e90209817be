"""A pause either policy reports: who may not call until when, and why; and how long a pause lasts
when the provider named no time (the one backoff both policies use)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime


@dataclass(frozen=True, slots=True)
class Pause:
    """An answer stopped every caller of the budget until ``until`` (epoch seconds on the
    throttle's clock).

    ``kind`` says what kind of refusal it was (``rate_limited``, or ``overloaded`` for a provider
    that is busy rather than counting); ``backoff`` says the provider gave no time and ``until``
    is our own exponential guess.
    """

    until: float
    reason: str
    kind: str = "rate_limited"
    backoff: bool = False


def backoff(strikes: int, base: float, cap: float, jitter: float | None = None) -> float:
    """Seconds to wait after ``strikes`` refusals in a row: ``base * 2**(strikes-1)``, capped, and
    with ``jitter`` (a draw in [0, 1]) spread over [0.5, 1) of that, so callers that were refused
    together do not all come back together."""
    wait = min(base * 2.0 ** (max(strikes, 1) - 1), cap)
    if jitter is None:
        return wait
    return wait * (0.5 + 0.5 * min(max(jitter, 0.0), 1.0))


class Paused(Exception):
    """``subject`` may not call until ``until`` (epoch seconds on the throttle's clock).

    Raised instead of sleeping when a pause is longer than the throttle's inline wait, so the
    worker ends ``paused`` with the time a later run can wait for, rather than block silently.
    Each provider layer says it in its own words (``IdentityPaused``, ``LLMPaused``), from the
    same ``until``, ``reason`` and ``now``.
    """

    def __init__(self, subject: str, until: float, reason: str, *, now: float | None = None):
        self.subject = subject
        self.until = until
        self.reason = reason
        self.now = now
        when = datetime.fromtimestamp(until, tz=UTC).isoformat(timespec="seconds")
        wait = "" if now is None else f" (in {max(0.0, until - now):.0f} s)"
        super().__init__(f"{subject} paused until {when}{wait}: {reason}")

    @property
    def until_datetime(self) -> datetime:
        return datetime.fromtimestamp(self.until, tz=UTC)


class ImpossibleRequest(Exception):
    """A request that can never fit the budget (it asks for more than a whole window holds):
    waiting would not help, so it is refused at once with the reason."""
