"""Budget state of one API key (per model) and the decisions the LLM throttle takes on it.

The provider meters requests, input tokens and output tokens per minute as token buckets that
refill continuously (``limit`` per minute, up to ``limit``). ``decide`` reserves a call's cost
when every meter holds it (the estimated input and the full ``max_tokens``, as the provider
does for output) or says when to look again; ``settle`` releases the reservation and folds in
the answer's ``anthropic-ratelimit-*`` headers. Answers arrive out of order, so a reading is
believed outright only when it is the newest the key has seen (its ``reset``, the time the bucket
would be full again, only moves later as calls are admitted); an older one can only lower the
estimate. Either way every other call still in flight is subtracted: one granted earlier may
reach the provider later, so any of them may be missing from the reading.

Cache reads: on current models they do not count against input tokens per minute, so a call is
charged ``input_tokens + cache_creation_input_tokens`` once it is answered; the reservation
before it covers its whole estimated input, because which part will be read from the cache is
only known afterwards. Models flagged ``cache_reads_count_for_rate_limit`` in the registry are
charged their cache reads too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Final, TypedDict

from agents.json_value import JSONObject
from agents.processes import dead_to, this_process
from agents.ratelimit.anthropic.limits import LLMLimits
from agents.ratelimit.anthropic.readings import Reading
from agents.ratelimit.backend import known_fields
from agents.ratelimit.decision import GRANTED, Decision
from agents.ratelimit.pause import Pause, backoff

RESOURCES: Final = ("requests", "input-tokens", "output-tokens")


@dataclass(slots=True)
class Meter:
    """Our estimate of one provider bucket: ``level`` tokens at time ``at``."""

    limit: int | None = None
    level: float = 0.0
    at: float = 0.0
    newest_reset: float = 0.0  # the latest reset time any reading carried

    def refill(self, now: float, lim: LLMLimits) -> None:
        if self.limit is None:
            return
        rate = self.limit / lim.window_s * lim.refill_safety
        self.level = min(float(self.limit), self.level + max(0.0, now - self.at) * rate)
        self.at = max(self.at, now)

    def due(self, amount: int, now: float, lim: LLMLimits) -> float:
        """When ``amount`` fits (``now`` if it does already); call after ``refill``."""
        assert self.limit is not None
        rate = self.limit / lim.window_s * lim.refill_safety
        return now + max(0.0, amount - self.level) / rate


@dataclass(slots=True)
class Hold:
    """A call in flight: what it reserved, when, for whom, and the process that holds it
    (``host:pid:token``, :mod:`agents.processes`; "" in a state written before it was kept)."""

    input_tokens: int
    output_tokens: int
    at: float
    worker_id: str
    holder: str = ""


@dataclass(slots=True)
class KeyState:
    meters: dict[str, Meter] = field(default_factory=dict)
    holds: dict[str, Hold] = field(default_factory=dict)
    paused_until: float = 0.0
    pause_reason: str = ""
    rate_limit_strikes: int = 0
    overload_strikes: int = 0
    granted: int = 0
    rate_limited: int = 0
    overloaded: int = 0

    def to_dict(self) -> JSONObject:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> KeyState:
        values = known_fields(cls, data)
        values["meters"] = {
            k: Meter(**known_fields(Meter, v)) for k, v in values.get("meters", {}).items()
        }
        values["holds"] = {
            k: Hold(**known_fields(Hold, v)) for k, v in values.get("holds", {}).items()
        }
        return cls(**values)


def decide(
    state: KeyState,
    rid: str,
    worker_id: str,
    cost: Mapping[str, int],
    now: float,
    lim: LLMLimits,
) -> Decision:
    """Reserve ``cost`` (per resource) if every meter holds it now; change nothing otherwise."""
    if state.paused_until > now:
        return Decision(False, state.paused_until, state.pause_reason, paused=True)
    # A hold of a process of this host that ended (killed mid-call) is let go at once, as the
    # GitHub buckets' reservations are: it held the key's tokens for inflight_ttl otherwise.
    here = this_process()
    gone = dead_to(here)
    stale = [k for k, h in state.holds.items() if now - h.at > lim.inflight_ttl or gone(h.holder)]
    for key in stale:
        del state.holds[key]
    due = now
    why = ""
    for resource in RESOURCES:
        meter = state.meters.get(resource)
        if meter is None or meter.limit is None:
            if state.holds:  # limits unknown yet: one probe at a time learns them
                return Decision(False, None, "learning the key's limits")
            continue
        meter.refill(now, lim)
        amount = cost.get(resource, 0)
        if amount > meter.limit:
            return Decision(
                False,
                None,
                f"the call needs {amount} {resource} but the key allows {meter.limit} per "
                "minute; lower max_output_tokens or the context budget",
                impossible=True,
            )
        when = meter.due(amount, now, lim)
        if when > due:
            due, why = when, f"pacing {resource} per minute"
    if due > now:
        return Decision(False, due, why)
    for resource in RESOURCES:
        meter = state.meters.get(resource)
        if meter is not None and meter.limit is not None:
            meter.level -= cost.get(resource, 0)
    state.holds[rid] = Hold(
        cost.get("input-tokens", 0), cost.get("output-tokens", 0), now, worker_id, here
    )
    state.granted += 1
    return GRANTED


@dataclass(frozen=True, slots=True)
class Charged:
    """The tokens one answered call was charged (None: not known, nothing is given back)."""

    input_tokens: int | None = None
    output_tokens: int | None = None


NOT_CHARGED: Final = Charged()


def settle(
    state: KeyState,
    rid: str,
    now: float,
    status: int | None,
    reading: Reading,
    charged: Charged,
    lim: LLMLimits,
    jitter: float = 0.5,
) -> Pause | None:
    """Release ``rid``'s reservation and fold in the answer; returns the pause it caused."""
    hold = state.holds.pop(rid, None)
    others = list(state.holds.values())
    in_flight = {
        "requests": len(others),
        "input-tokens": sum(h.input_tokens for h in others),
        "output-tokens": sum(h.output_tokens for h in others),
    }
    for resource in RESOURCES:
        meter = state.meters.setdefault(resource, Meter())
        meter.refill(now, lim)
        if hold is not None and status == 200 and meter.limit is not None:
            meter.level += _unused(hold, resource, charged)
        limit, remaining = reading.limit.get(resource), reading.remaining.get(resource)
        if limit is None or remaining is None:
            continue
        provider = float(remaining - in_flight[resource])
        reset = reading.reset.get(resource, 0.0)
        if meter.limit is None or reset > meter.newest_reset:
            meter.level, meter.newest_reset = provider, reset
        else:
            meter.level = min(meter.level, provider)
        meter.limit, meter.at = limit, now
    if status == 429:
        return _rate_limited(state, now, reading, lim)
    if status == 529:
        return _overloaded(state, now, lim, jitter)
    if status is not None and status < 400:
        state.rate_limit_strikes = 0
        state.overload_strikes = 0
    return None


def _unused(hold: Hold, resource: str, charged: Charged) -> int:
    """What a call reserved beyond what it was charged (cache reads, a short answer)."""
    if resource == "input-tokens" and charged.input_tokens is not None:
        return hold.input_tokens - charged.input_tokens
    if resource == "output-tokens" and charged.output_tokens is not None:
        return hold.output_tokens - charged.output_tokens
    return 0


def _pause(state: KeyState, until: float, reason: str, kind: str, *, guessed: bool) -> Pause:
    if until > state.paused_until:
        state.paused_until, state.pause_reason = until, reason
    return Pause(state.paused_until, state.pause_reason, kind, backoff=guessed)


def _rate_limited(state: KeyState, now: float, reading: Reading, lim: LLMLimits) -> Pause:
    state.rate_limited += 1
    state.rate_limit_strikes += 1
    wait = reading.retry_after
    guessed = wait is None
    if wait is None:
        wait = backoff(state.rate_limit_strikes, lim.rate_limit_backoff, 3600.0)
    reason = "the model provider rate-limited this key (429)"
    return _pause(state, now + wait, reason, "rate_limited", guessed=guessed)


def _overloaded(state: KeyState, now: float, lim: LLMLimits, jitter: float) -> Pause:
    state.overloaded += 1
    state.overload_strikes += 1
    initial, cap = lim.overload_backoff_initial, lim.overload_backoff_max
    wait = backoff(state.overload_strikes, initial, cap, jitter)
    reason = "the model provider is overloaded (529)"
    return _pause(state, now + wait, reason, "overloaded", guessed=True)


class Budget(TypedDict):
    limit: int
    remaining: int


class KeyView(TypedDict):
    """A key's budget as people read it (``swarm`` status, the audit)."""

    budgets: dict[str, Budget]
    in_flight: int
    paused_for_s: float
    pause_reason: str
    calls: int
    rate_limited: int
    overloaded: int


def snapshot(state: KeyState, now: float, lim: LLMLimits) -> KeyView:
    """The key's budget as people read it (remaining per resource, pause, counters)."""
    view: dict[str, Budget] = {}
    for resource, meter in state.meters.items():
        if meter.limit is None:
            continue
        rate = meter.limit / lim.window_s
        level = min(float(meter.limit), meter.level + max(0.0, now - meter.at) * rate)
        view[resource] = {"limit": meter.limit, "remaining": max(0, math.floor(level))}
    return {
        "budgets": view,
        "in_flight": len(state.holds),
        "paused_for_s": round(max(0.0, state.paused_until - now), 1),
        "pause_reason": state.pause_reason if state.paused_until > now else "",
        "calls": state.granted,
        "rate_limited": state.rate_limited,
        "overloaded": state.overloaded,
    }
