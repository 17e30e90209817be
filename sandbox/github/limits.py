"""Per-identity rate limits: primary buckets per resource and GitHub's secondary limits.

Windows are fixed: they open at an identity's first counted request and reset one
window length later (GitHub's primary reset works this way). All times are sandbox
clock seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

Resource = Literal["core", "graphql", "search"]


@dataclass
class RateLimits:
    """Every number GitHub documents, overridable so tests can hit a limit in a few calls."""

    core: int = 5000
    graphql: int = 5000
    search: int = 30
    primary_window_s: float = 3600.0
    search_window_s: float = 60.0
    concurrency: int = 100
    rest_points_per_window: int = 900
    graphql_points_per_window: int = 2000
    secondary_window_s: float = 60.0
    content_per_window: int = 80
    content_per_hour: int = 500
    content_hour_s: float = 3600.0
    read_points: int = 1
    write_points: int = 5
    graphql_query_points: int = 1
    graphql_mutation_points: int = 5

    def primary_limit(self, resource: Resource) -> int:
        return {"core": self.core, "graphql": self.graphql, "search": self.search}[resource]

    def primary_window(self, resource: Resource) -> float:
        return self.search_window_s if resource == "search" else self.primary_window_s


@dataclass
class Window:
    start: float | None = None
    used: int = 0

    def roll(self, now: float, length: float) -> None:
        if self.start is None or now >= self.start + length:
            self.start = now
            self.used = 0

    def reset_at(self, now: float, length: float) -> float:
        if self.start is None or now >= self.start + length:
            return now + length
        return self.start + length

    def used_now(self, now: float, length: float) -> int:
        if self.start is None or now >= self.start + length:
            return 0
        return self.used


@dataclass
class Denial:
    kind: Literal["primary", "secondary"]
    reason: str
    retry_after: int


@dataclass
class IdentityBuckets:
    primary: dict[str, Window] = field(default_factory=dict)
    rest_points: Window = field(default_factory=Window)
    graphql_points: Window = field(default_factory=Window)
    content_minute: Window = field(default_factory=Window)
    content_hour: Window = field(default_factory=Window)
    in_flight: int = 0


@dataclass
class PrimaryStatus:
    limit: int
    remaining: int
    used: int
    reset: int
    resource: Resource


class RateLimiter:
    """Accounting only; callers hold the state lock."""

    def __init__(self, limits: RateLimits) -> None:
        self.limits = limits
        self.identities: dict[str, IdentityBuckets] = {}

    def buckets(self, login: str) -> IdentityBuckets:
        return self.identities.setdefault(login, IdentityBuckets())

    def status(self, login: str, resource: Resource, now: float) -> PrimaryStatus:
        window = self.buckets(login).primary.setdefault(resource, Window())
        length = self.limits.primary_window(resource)
        limit = self.limits.primary_limit(resource)
        used = window.used_now(now, length)
        return PrimaryStatus(
            limit=limit,
            remaining=max(0, limit - used),
            used=used,
            reset=math.ceil(window.reset_at(now, length)),
            resource=resource,
        )

    def enter(self, login: str) -> Denial | None:
        """Count a request in flight, or refuse it when the identity is at its cap."""
        buckets = self.buckets(login)
        if buckets.in_flight >= self.limits.concurrency:
            return Denial("secondary", "concurrency", retry_after=1)
        buckets.in_flight += 1
        return None

    def leave(self, login: str) -> None:
        buckets = self.buckets(login)
        buckets.in_flight = max(0, buckets.in_flight - 1)

    def charge(
        self,
        login: str,
        resource: Resource,
        now: float,
        *,
        is_write: bool,
        content_creation: bool,
        graphql_mutation: bool = False,
    ) -> Denial | None:
        """Check every limit the request touches; count it against all of them only if it passes."""
        lim = self.limits
        b = self.buckets(login)
        primary = b.primary.setdefault(resource, Window())
        p_len = lim.primary_window(resource)
        primary.roll(now, p_len)
        if primary.used + 1 > lim.primary_limit(resource):
            return Denial("primary", resource, _after(primary, now, p_len))

        s_len = lim.secondary_window_s
        if resource == "graphql":
            points = lim.graphql_mutation_points if graphql_mutation else lim.graphql_query_points
            points_window, cap = b.graphql_points, lim.graphql_points_per_window
        else:
            points = lim.write_points if is_write else lim.read_points
            points_window, cap = b.rest_points, lim.rest_points_per_window
        points_window.roll(now, s_len)
        if points_window.used + points > cap:
            return Denial("secondary", f"{resource} points", _after(points_window, now, s_len))

        if content_creation:
            b.content_minute.roll(now, s_len)
            b.content_hour.roll(now, lim.content_hour_s)
            if b.content_minute.used + 1 > lim.content_per_window:
                return Denial("secondary", "content creation", _after(b.content_minute, now, s_len))
            if b.content_hour.used + 1 > lim.content_per_hour:
                return Denial(
                    "secondary",
                    "content creation per hour",
                    _after(b.content_hour, now, lim.content_hour_s),
                )
            b.content_minute.used += 1
            b.content_hour.used += 1
        primary.used += 1
        points_window.used += points
        return None

    def refund_primary(self, login: str, resource: Resource, now: float) -> None:
        """Hand back a primary point charged on arrival: the answer was one GitHub does not
        count (a 304 to a conditional request). Its secondary points stay spent."""
        window = self.buckets(login).primary.get(resource)
        if window is not None and window.used_now(now, self.limits.primary_window(resource)):
            window.used -= 1


def _after(window: Window, now: float, length: float) -> int:
    return max(1, math.ceil(window.reset_at(now, length) - now))


def peak_in_any_window(times: list[float], span: float) -> int:
    """The most of ``times`` within ``span`` seconds of each other: what a sliding window of that
    length, aligned anywhere, would count (the sandbox's own windows are fixed)."""
    times = sorted(times)
    best, lo = 0, 0
    for hi, t in enumerate(times):
        while times[lo] <= t - span:
            lo += 1
        best = max(best, hi - lo + 1)
    return best
