"""Leave to send one request, held until its answer is settled with the throttle."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Permit(Generic[R]):
    """One granted request: its cost stays reserved under ``reservation_id`` in the budget state
    until :meth:`agents.ratelimit.throttle.Throttle.settle` (or ``abandon``) hands it back."""

    reservation_id: str
    worker_id: str
    request: R
    requested_at: float
    granted_at: float

    @property
    def waited(self) -> float:
        return self.granted_at - self.requested_at
