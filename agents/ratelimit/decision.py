"""What a policy decides about one waiting request: it may go now, or when to look again."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class Decision:
    """``granted``; else wait until ``wait_until`` (None: until something in flight ends).

    ``paused``: the wait is a pause of the whole budget (a rate-limit answer, a spent budget), not
    ordinary pacing: beyond the throttle's inline wait it is reported instead of slept.
    ``impossible``: the request can never fit the budget; ``reason`` says why.
    """

    granted: bool
    wait_until: float | None = None
    reason: str = ""
    paused: bool = False
    impossible: bool = False


GRANTED: Final = Decision(True)
