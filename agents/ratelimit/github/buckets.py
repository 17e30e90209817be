"""Budget state of one identity and the decision the throttle takes on it.

``decide`` says whether a request may go now (reserving its cost) or when to look again;
``readings.observe`` releases the reservation and folds in GitHub's answer. Both run under the
backend's lock (a mutex in memory, a row lock in SQL) so several processes can share one
identity. GitHub's ``x-ratelimit-*`` headers are authoritative; reservations cover what is in
flight meanwhile.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from agents.json_value import JSONObject
from agents.processes import dead_to, this_process
from agents.ratelimit.backend import known_fields
from agents.ratelimit.decision import GRANTED, Decision
from agents.ratelimit.github.limits import ThrottleLimits
from agents.ratelimit.github.requests import RequestSpec

# Before this many answers without x-ratelimit headers, a resource is treated as limited but
# unknown (one probe at a time); after, as unlimited (GitHub Enterprise with rate limits off).
HEADERLESS_UNLIMITED_AFTER = 3
# Requests-by-worker counts kept for the snapshot; worker ids are per run, so this is bounded.
WORKERS_TRACKED = 256


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
    # The process holding it (``host:pid:token``; "" in a row written before it was kept): a
    # reservation of a process of this host that is gone stops counting at once, not after
    # ``inflight_ttl``. A receiver killed while its worker posted left its write "in flight"
    # and held every write of its identity for ten minutes.
    holder: str = ""


@dataclass(slots=True)
class IdentityState:
    buckets: dict[str, BucketState] = field(default_factory=dict)
    inflight: dict[str, Reservation] = field(default_factory=dict)
    rest_tat: float = 0.0
    graphql_tat: float = 0.0
    # When each content-creating request of the last hour went out (oldest first).
    content_log: list[float] = field(default_factory=list)
    last_write_end: float = -math.inf
    paused_until: float = 0.0
    pause_reason: str = ""
    pause_strikes: int = 0
    rate_limited_responses: int = 0
    requests_by_worker: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> JSONObject:
        data: JSONObject = asdict(self)
        data["last_write_end"] = None if math.isinf(self.last_write_end) else self.last_write_end
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> IdentityState:
        # Unknown keys are dropped: a row written by another version still loads.
        values = known_fields(cls, data)
        values["buckets"] = {
            k: BucketState(**known_fields(BucketState, v))
            for k, v in values.get("buckets", {}).items()
        }
        values["inflight"] = {
            k: Reservation(**known_fields(Reservation, v))
            for k, v in values.get("inflight", {}).items()
        }
        if values.get("last_write_end") is None:
            values["last_write_end"] = -math.inf
        return cls(**values)


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


def _content_due(log: list[float], now: float, lim: ThrottleLimits) -> tuple[float, str] | None:
    """When one more content creation fits both caps, or None if it fits now.

    An exact sliding window over what went out, widened by a margin because GitHub counts on
    arrival: any window GitHub may use then holds at most the cap.
    """
    for cap, window, what in (
        (lim.content_per_minute, lim.minute_s, "content creation per minute"),
        (lim.content_per_hour, lim.hour_s, "content creation per hour"),
    ):
        span = window + lim.content_window_margin
        recent = [t for t in log if t > now - span]
        if len(recent) >= cap:
            return recent[len(recent) - cap] + span, what
    return None


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
    here = this_process()
    gone = dead_to(here)
    stale = [key for key, r in inflight.items() if now - r.at > lim.inflight_ttl or gone(r.holder)]
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

    # Secondary point windows: GraphQL's and REST's, each its own.
    graphql = spec.resource == "graphql"
    points_tat = _gcra(
        state.graphql_tat if graphql else state.rest_tat,
        now,
        spec.points,
        lim.graphql_points_per_minute if graphql else lim.rest_points_per_minute,
        lim.minute_s + lim.points_window_margin,
        lim.window_burst_fraction,
    )
    if points_tat < 0:
        return Decision(False, -points_tat, f"{spec.resource} points per minute")
    if spec.is_content_creation:
        content_wait = _content_due(state.content_log, now, lim)
        if content_wait is not None:
            return Decision(False, *content_wait)

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
                    held = cap if bucket.pace_tokens is None else bucket.pace_tokens
                    # Tokens already held are budget too: spreading only the rest makes the
                    # budget run out at the reset, not a burst's worth earlier.
                    rate = max(0.0, estimate - reserve - held) / time_left
                    tokens = min(cap, held + max(0.0, now - bucket.pace_at) * rate)
                    if tokens + _EPS < spec.primary_cost:
                        # rate > 0 here: held < cost <= estimate - reserve.
                        due = now + (spec.primary_cost - tokens) / rate
                        return Decision(False, due, "pacing")
                    pace_tokens = tokens - spec.primary_cost
                else:
                    pace_tokens = cap

    # Every check passed: commit.
    if pace_tokens is not None:
        bucket.pace_tokens = pace_tokens
        bucket.pace_at = now
    if graphql:
        state.graphql_tat = points_tat
    else:
        state.rest_tat = points_tat
    if spec.is_content_creation:
        horizon = now - lim.hour_s - lim.content_window_margin
        state.content_log = [t for t in state.content_log if t >= horizon]
        state.content_log.append(now)
    inflight[reservation_id] = Reservation(
        spec.resource, spec.primary_cost, spec.points, spec.is_write, now, here
    )
    counts = state.requests_by_worker
    if worker_id not in counts and len(counts) >= WORKERS_TRACKED:
        del counts[next(iter(counts))]  # the longest-known worker; keeps shared rows small
    counts[worker_id] = counts.get(worker_id, 0) + 1
    return GRANTED
