"""A pause either throttle reports: who may not call until when, and why."""

from __future__ import annotations

from datetime import UTC, datetime


class Paused(Exception):
    """``subject`` may not call until ``until`` (epoch seconds on the throttle's clock).

    Raised instead of sleeping when a pause is longer than the throttle's inline wait, so the
    worker ends ``paused`` with the time a later run can wait for, rather than block silently.
    """

    def __init__(self, subject: str, until: float, reason: str, *, now: float | None = None):
        self.until = until
        self.reason = reason
        when = datetime.fromtimestamp(until, tz=UTC).isoformat(timespec="seconds")
        wait = "" if now is None else f" (in {max(0.0, until - now):.0f} s)"
        super().__init__(f"{subject} paused until {when}{wait}: {reason}")

    @property
    def until_datetime(self) -> datetime:
        return datetime.fromtimestamp(self.until, tz=UTC)
