"""Budget state of one identity and the two pure steps the throttle runs on it.

``decide`` says whether a request may go now (reserving its cost) or when to look again;
``observe`` releases the reservation and folds in GitHub's answer. Both run under the backend's
lock (a mutex in memory, a row lock in SQL) so several processes can share one identity. GitHub's
``x-ratelimit-*`` headers are authoritative; reservations cover what is in flight meanwhile.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from agents.github.limits import ThrottleLimits
from agents.github.requests import RequestSpec

# Before this many answers without x-ratelimit headers, a resource is treated as limited but
# unknown (one probe at a time); after, as unlimited (GitHub Enterprise with rate limits off).
HEADERLESS_UNLIMITED_AFTER = 3


# Epoch seconds as floats resolve to ~2e-7 s; comparisons allow for that.
_EPS = 1e-6


@dataclass(slots=True)
class BucketState:
    limit: int | None = None
    remaining: int | None = None
    used: int | None = None
    reset: float | None = None
    # Pacing token bucket for reads: refills at (spendable budget / time to reset).
    pace_tokens: float | None = None
    pace_at: float = 0.0
    headerless: int = 0


@dataclass(slots=True)
class Reservation:
    resource: str
    primary_cost: int
    points: int
    is_write: bool
    at: float


@dataclass(slots=True)
class IdentityState:
    buckets: dict[str, BucketState] = field(default_factory=dict)
    inflight: dict[str, Reservation] = field(default_factory=dict)
    rest_tat: float = 0.0
    graphql_tat: float = 0.0
    content_minute_tat: float = 0.0
    content_hour_tat: float = 0.0
    last_write_end: float = -math.inf
    paused_until: float = 0.0
    pause_reason: str = ""
    pause_strikes: int = 0
    rate_limited_responses: int = 0
    requests_by_worker: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["last_write_end"] = None if math.isinf(self.last_write_end) else self.last_write_end
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> IdentityState:
        values = dict(data)
        values["buckets"] = {k: BucketState(**v) for k, v in values.get("buckets", {}).items()}
        values["inflight"] = {k: Reservation(**v) for k, v in values.get("inflight", {}).items()}
        if values.get("last_write_end") is None:
            values["last_write_end"] = -math.inf
        return cls(**values)


@dataclass(frozen=True, slots=True)
class Decision:
    """``granted``; else wait until ``wait_until`` (None: until something in flight ends)."""

    granted: bool
    wait_until: float | None = None
    reason: str = ""
    # True when the wait is a pause of the identity (or its spent budget), not ordinary pacing:
    # beyond max_inline_wait the throttle reports it instead of sleeping.
    paused: bool = False


GRANTED = Decision(True)


@dataclass(frozen=True, slots=True)
class Pause:
    until: float
    reason: str


def _gcra(tat: float, now: float, cost: int, cap: int, window: float, frac: float) -> float:
    """Token bucket as a theoretical arrival time; returns the new tat, or -due if not yet."""
    if cost <= 0:
        return tat
    # Capacity B and refill (cap - B)/window keep any window of that length, aligned anywhere,
    # within cap: at most B + (cap - B) units.
    burst = min(float(cap), max(cap * frac, float(cost)))
    interval = window / (cap - burst) if cap > burst else window / cap
    horizon = burst * interval
    new_tat = max(tat, now) + cost * interval
    if new_tat - now <= horizon + _EPS:
        return new_tat
    return -(new_tat - horizon)


def decide(
    state: IdentityState,
    spec: RequestSpec,
    reservation_id: str,
    worker_id: str,
    now: float,
    lim: ThrottleLimits,
) -> Decision:
    """Reserve the request's cost if every limit allows it now; change nothing otherwise."""
    if state.paused_until > now:
        return Decision(False, state.paused_until, state.pause_reason, paused=True)
    inflight = state.inflight
    stale = [key for key, r in inflight.items() if now - r.at > lim.inflight_ttl]
    for key in stale:
        del inflight[key]
    if len(inflight) >= lim.max_concurrency:
        return Decision(False, None, "concurrency cap")

    if spec.is_write:
        if any(r.is_write for r in inflight.values()):
            return Decision(False, None, "a mutation is in flight")
        due = state.last_write_end + lim.min_write_interval
        if due > now:
            return Decision(False, due, "spacing between mutations")

    # Secondary point windows.
    if spec.resource == "graphql":
        points_tat = _gcra(
            state.graphql_tat,
            now,
            spec.points,
            lim.graphql_points_per_minute,
            lim.minute_s,
            lim.window_burst_fraction,
        )
    else:
        points_tat = _gcra(
            state.rest_tat,
            now,
            spec.points,
            lim.rest_points_per_minute,
            lim.minute_s,
            lim.window_burst_fraction,
        )
    if points_tat < 0:
        return Decision(False, -points_tat, f"{spec.resource} points per minute")
    minute_tat = state.content_minute_tat
    hour_tat = state.content_hour_tat
    if spec.is_content_creation:
        minute_tat = _gcra(
            minute_tat, now, 1, lim.content_per_minute, lim.minute_s, lim.window_burst_fraction
        )
        if minute_tat < 0:
            return Decision(False, -minute_tat, "content creation per minute")
        hour_tat = _gcra(
            hour_tat, now, 1, lim.content_per_hour, lim.hour_s, lim.window_burst_fraction
        )
        if hour_tat < 0:
            return Decision(False, -hour_tat, "content creation per hour")

    # Primary bucket.
    bucket = state.buckets.get(spec.resource)
    if bucket is None:
        bucket = state.buckets[spec.resource] = BucketState()
    pace_tokens: float | None = None  # set when this read draws on the pacing bucket
    if spec.primary_cost > 0:
        if bucket.remaining is None or bucket.reset is None or bucket.limit is None:
            if bucket.headerless < HEADERLESS_UNLIMITED_AFTER and any(
                r.resource == spec.resource for r in inflight.values()
            ):
                return Decision(False, None, f"probing the {spec.resource} budget")
        elif now >= bucket.reset:
            if now < bucket.reset + lim.reset_grace:
                return Decision(False, bucket.reset + lim.reset_grace, "waiting for the reset")
            if any(r.resource == spec.resource for r in inflight.values()):
                return Decision(False, None, f"probing the {spec.resource} budget after reset")
        else:
            committed = sum(
                r.primary_cost for r in inflight.values() if r.resource == spec.resource
            )
            estimate = bucket.remaining - committed
            reserve = 0 if spec.is_write else lim.write_reserve(bucket.limit)
            if estimate - spec.primary_cost < reserve:
                if committed:
                    # Answers in flight may show the budget is larger than assumed.
                    return Decision(False, None, f"{spec.resource} budget nearly spent")
                until = bucket.reset + lim.reset_grace
                reason = f"{spec.resource} budget spent until the reset"
                return Decision(False, until, reason, paused=True)
            if not spec.is_write:
                # The refill rate only rises while a read waits (less time, same budget), so
                # the computed wait is never too short to be worth it.
                time_left = bucket.reset - lim.pace_margin - now
                cap = max(
                    lim.pace_burst_min, bucket.limit * lim.pace_burst_fraction, spec.primary_cost
                )
                if time_left > 0:
                    rate = (estimate - reserve) / time_left
                    held = cap if bucket.pace_tokens is None else bucket.pace_tokens
                    tokens = min(cap, held + max(0.0, now - bucket.pace_at) * rate)
                    if tokens + _EPS < spec.primary_cost:
                        return Decision(False, now + (spec.primary_cost - tokens) / rate, "pacing")
                    pace_tokens = tokens - spec.primary_cost
                else:
                    pace_tokens = cap

    # Every check passed: commit.
    if pace_tokens is not None:
        bucket.pace_tokens = pace_tokens
        bucket.pace_at = now
    if spec.resource == "graphql":
        state.graphql_tat = points_tat
    else:
        state.rest_tat = points_tat
    state.content_minute_tat = minute_tat
    state.content_hour_tat = hour_tat
    inflight[reservation_id] = Reservation(
        spec.resource, spec.primary_cost, spec.points, spec.is_write, now
    )
    state.requests_by_worker[worker_id] = state.requests_by_worker.get(worker_id, 0) + 1
    return GRANTED


def _int(headers: Mapping[str, str], name: str) -> int | None:
    value = headers.get(name)
    if value is None:
        return None
    try:
        return int(float(value))
    except ValueError:
        return None


def apply_bucket(bucket: BucketState, limit: int, remaining: int, used: int, reset: float) -> None:
    """Fold in one authoritative reading, ignoring readings older than what is known."""
    bucket.headerless = 0
    if bucket.reset is not None and reset < bucket.reset:
        return  # from a window already over
    same_window = bucket.reset is not None and reset == bucket.reset
    if same_window and bucket.used is not None and used < bucket.used:
        return  # answered before a reading we already have
    bucket.limit, bucket.remaining, bucket.used, bucket.reset = limit, remaining, used, reset


def apply_headers(state: IdentityState, resource: str, headers: Mapping[str, str]) -> None:
    resource = headers.get("x-ratelimit-resource") or resource
    bucket = state.buckets.get(resource)
    if bucket is None:
        bucket = state.buckets[resource] = BucketState()
    limit = _int(headers, "x-ratelimit-limit")
    remaining = _int(headers, "x-ratelimit-remaining")
    reset = _int(headers, "x-ratelimit-reset")
    if limit is None or remaining is None or reset is None:
        bucket.headerless += 1
        return
    used = _int(headers, "x-ratelimit-used")
    apply_bucket(bucket, limit, remaining, limit - remaining if used is None else used, reset)


def apply_rate_limit_body(state: IdentityState, body: Mapping[str, Any]) -> None:
    """``GET /rate_limit`` lists every resource; each entry is as good as a header reading."""
    resources = body.get("resources")
    if not isinstance(resources, Mapping):
        return
    for name, entry in resources.items():
        if not isinstance(entry, Mapping):
            continue
        try:
            limit, remaining = int(entry["limit"]), int(entry["remaining"])
            used = int(entry.get("used", limit - remaining))
            reset = float(entry["reset"])
        except (KeyError, TypeError, ValueError):
            continue
        bucket = state.buckets.setdefault(str(name), BucketState())
        apply_bucket(bucket, limit, remaining, used, reset)


def rate_limit_pause(
    state: IdentityState,
    now: float,
    status: int | None,
    headers: Mapping[str, str],
    message: str | None,
    graphql_rate_limited: bool,
    lim: ThrottleLimits,
) -> Pause | None:
    """How long GitHub's answer pauses the identity, or None if it is no rate-limit answer."""
    text = (message or "").lower()
    remaining = headers.get("x-ratelimit-remaining")
    limited = graphql_rate_limited or (
        status in (403, 429)
        and (status == 429 or "retry-after" in headers or remaining == "0" or "rate limit" in text)
    )
    if not limited:
        return None
    if graphql_rate_limited:
        kind = "GraphQL RATE_LIMITED"
    elif "secondary rate limit" in text:
        kind = f"secondary rate limit ({status})"
    elif status == 429:
        kind = "429 Too Many Requests"
    else:
        kind = f"rate limit ({status})"
    retry_after = headers.get("retry-after")
    if retry_after is not None:
        try:
            seconds = max(0.0, float(retry_after))
        except ValueError:
            seconds = None
        if seconds is not None:
            return Pause(now + seconds, f"{kind}: retry-after {seconds:.0f} s")
    reset = _int(headers, "x-ratelimit-reset")
    if remaining == "0" and reset is not None:
        resource = headers.get("x-ratelimit-resource", "primary")
        return Pause(max(float(reset), now), f"{kind}: {resource} budget exhausted until the reset")
    strikes = state.pause_strikes + 1
    seconds = min(lim.pause_backoff_base * 2 ** (strikes - 1), lim.pause_backoff_max)
    return Pause(now + seconds, f"{kind} without retry-after or reset: backing off {seconds:.0f} s")


def observe(
    state: IdentityState,
    reservation_id: str,
    spec: RequestSpec,
    now: float,
    status: int | None,
    headers: Mapping[str, str],
    message: str | None,
    graphql_rate_limited: bool,
    lim: ThrottleLimits,
) -> Pause | None:
    """Release the reservation and fold in GitHub's answer (``status`` None: no answer)."""
    reservation = state.inflight.pop(reservation_id, None)
    if reservation is not None and reservation.is_write:
        state.last_write_end = max(state.last_write_end, now)
    if status is None:
        return None
    apply_headers(state, spec.resource, headers)
    pause = rate_limit_pause(state, now, status, headers, message, graphql_rate_limited, lim)
    if pause is None:
        if status < 400:
            state.pause_strikes = 0
        return None
    if "backing off" in pause.reason:
        state.pause_strikes += 1
    state.rate_limited_responses += 1
    if pause.until > state.paused_until:
        state.paused_until = pause.until
        state.pause_reason = pause.reason
    return pause
