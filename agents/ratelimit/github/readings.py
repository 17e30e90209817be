"""What GitHub's answers say about the budget: rate-limit headers, ``/rate_limit``, pauses."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agents.ratelimit.github.buckets import BucketState, IdentityState, Reservation
from agents.ratelimit.github.limits import ThrottleLimits
from agents.ratelimit.github.requests import RequestSpec
from agents.ratelimit.pause import Pause, backoff


@dataclass(frozen=True, slots=True)
class Answer:
    """What GitHub said about one request, as far as the budget is concerned."""

    status: int | None  # None: no answer at all (timeout, connection error)
    headers: Mapping[str, str]
    message: str | None = None
    graphql_rate_limited: bool = False


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


def apply_rate_limit_body(state: IdentityState, body: Mapping[str, object]) -> None:
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


def spend_timed_out(state: IdentityState, reservation: Reservation, answer: Answer) -> None:
    """A GraphQL query GitHub stopped at its time limit (502/504) still costs its points, and
    more for the next hour (docs: "Rate limits and query limits for the GraphQL API",
    timeouts): an answer without rate-limit headers counts its cost as spent, not given back.
    One with headers already said what is left."""
    if reservation.resource != "graphql" or answer.status not in (502, 504):
        return
    if "x-ratelimit-remaining" in answer.headers:
        return
    bucket = state.buckets.get("graphql")
    if bucket is None or bucket.remaining is None:
        return
    bucket.remaining = max(0, bucket.remaining - reservation.primary_cost)
    if bucket.used is not None:
        bucket.used += reservation.primary_cost


def rate_limit_pause(
    state: IdentityState, now: float, answer: Answer, lim: ThrottleLimits
) -> Pause | None:
    """How long GitHub's answer pauses the identity, or None if it is no rate-limit answer."""
    status, headers = answer.status, answer.headers
    text = (answer.message or "").lower()
    remaining = headers.get("x-ratelimit-remaining")
    limited = answer.graphql_rate_limited or (
        status in (403, 429)
        and (status == 429 or "retry-after" in headers or remaining == "0" or "rate limit" in text)
    )
    if not limited:
        return None
    if answer.graphql_rate_limited:
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
    seconds = backoff(strikes, lim.pause_backoff_base, lim.pause_backoff_max)
    reason = f"{kind} without retry-after or reset: backing off {seconds:.0f} s"
    return Pause(now + seconds, reason, backoff=True)


def observe(
    state: IdentityState,
    reservation_id: str,
    spec: RequestSpec,
    now: float,
    answer: Answer,
    lim: ThrottleLimits,
) -> Pause | None:
    """Release the reservation and fold in GitHub's answer."""
    reservation = state.inflight.pop(reservation_id, None)
    if reservation is not None and reservation.is_write:
        state.last_write_end = max(state.last_write_end, now)
    if answer.status is None:
        return None
    apply_headers(state, spec.resource, answer.headers)
    if reservation is not None:
        spend_timed_out(state, reservation, answer)
    pause = rate_limit_pause(state, now, answer, lim)
    if pause is None:
        if answer.status < 400:
            state.pause_strikes = 0
        return None
    if pause.backoff:
        state.pause_strikes += 1
    state.rate_limited_responses += 1
    if pause.until > state.paused_until:
        state.paused_until = pause.until
        state.pause_reason = pause.reason
    return pause
