"""Decisions of the per-key LLM budget: reserve, pace, learn from headers, pause on 429/529."""

from __future__ import annotations

import pytest

from agents.ratelimit.anthropic.limits import LLMLimits
from agents.ratelimit.anthropic.meters import NOT_CHARGED, Charged, KeyState, decide, settle
from agents.ratelimit.anthropic.readings import NO_READING, Reading, read_headers

LIM = LLMLimits(refill_safety=1.0)
T0 = 1_700_000_000.0


def _cost(inp: int, out: int = 100) -> dict[str, int]:
    return {"requests": 1, "input-tokens": inp, "output-tokens": out}


def _reading(inp_remaining: int, *, inp_limit: int = 6000, retry: float | None = None) -> Reading:
    return Reading(
        limit={"requests": 1000, "input-tokens": inp_limit, "output-tokens": 10_000},
        remaining={"requests": 900, "input-tokens": inp_remaining, "output-tokens": 9000},
        retry_after=retry,
    )


def _learned(remaining: int = 6000) -> KeyState:
    state = KeyState()
    assert decide(state, "probe", "w", _cost(10), T0, LIM).granted
    settle(state, "probe", T0, 200, _reading(remaining), Charged(10, 5), LIM)
    return state


def test_the_first_call_probes_alone_until_the_limits_are_known() -> None:
    state = KeyState()
    assert decide(state, "a", "w1", _cost(1000), T0, LIM).granted
    waiting = decide(state, "b", "w2", _cost(1000), T0, LIM)
    assert not waiting.granted and waiting.wait_until is None
    assert waiting.reason == "learning the key's limits"
    settle(state, "a", T0, 200, _reading(5000), Charged(1000, 50), LIM)
    assert decide(state, "b", "w2", _cost(1000), T0, LIM).granted


def test_a_call_that_does_not_fit_waits_for_the_refill() -> None:
    state = _learned(remaining=1000)
    assert decide(state, "a", "w", _cost(800), T0, LIM).granted
    paced = decide(state, "b", "w", _cost(800), T0, LIM)
    # 200 left, 800 wanted: 600 tokens at 6000 per minute is 6 s.
    assert not paced.granted and paced.wait_until == pytest.approx(T0 + 6.0)
    assert paced.reason == "pacing input-tokens per minute" and not paced.paused
    assert decide(state, "b", "w", _cost(800), T0 + 6.0, LIM).granted


def test_the_answer_headers_are_authoritative_minus_the_calls_still_in_flight() -> None:
    state = _learned()
    assert decide(state, "a", "w1", _cost(1000), T0, LIM).granted
    assert decide(state, "b", "w2", _cost(700), T0, LIM).granted
    # a's answer: the provider saw only a (and counted 400 of it: the rest was cache reads).
    settle(state, "a", T0, 200, _reading(5600), Charged(400, 50), LIM)
    assert state.meters["input-tokens"].level == 5600 - 700
    assert list(state.holds) == ["b"]


def test_an_older_reading_arriving_late_can_only_lower_the_estimate() -> None:
    state = _learned()
    for rid in ("a", "b"):
        assert decide(state, rid, "w", _cost(1000), T0, LIM).granted
    newer = Reading(
        limit={"input-tokens": 6000},
        remaining={"input-tokens": 4000},
        reset={"input-tokens": T0 + 20},
    )
    older = Reading(
        limit={"input-tokens": 6000},
        remaining={"input-tokens": 5000},
        reset={"input-tokens": T0 + 10},
    )
    settle(state, "b", T0, 200, newer, Charged(1000, 10), LIM)  # b reached the provider after a
    assert state.meters["input-tokens"].level == 4000 - 1000  # a may not be in the reading
    settle(state, "a", T0, 200, older, Charged(1000, 10), LIM)
    # a's 5,000 predates b: not believed. The safe side holds until a newer reading comes.
    assert state.meters["input-tokens"].level == 3000
    assert state.meters["input-tokens"].newest_reset == T0 + 20


def test_without_headers_the_unused_reservation_is_handed_back() -> None:
    state = _learned()
    assert decide(state, "a", "w", _cost(1000, out=500), T0, LIM).granted
    assert state.meters["input-tokens"].level == 5000
    settle(state, "a", T0, 200, NO_READING, Charged(300, 20), LIM)
    assert state.meters["input-tokens"].level == 5700
    assert state.meters["output-tokens"].level == 9000 - 20


def test_a_call_larger_than_the_per_minute_budget_is_impossible_and_says_so() -> None:
    state = _learned()
    decision = decide(state, "a", "w", _cost(7000), T0, LIM)
    assert decision.impossible and not decision.granted
    assert decision.reason.startswith(
        "the call needs 7000 input-tokens but the key allows 6000 per minute"
    )


def test_a_429_pauses_the_key_for_every_worker_until_retry_after() -> None:
    state = _learned()
    assert decide(state, "a", "w1", _cost(100), T0, LIM).granted
    pause = settle(state, "a", T0, 429, _reading(0, retry=20), NOT_CHARGED, LIM)
    assert pause is not None and pause.until == T0 + 20 and pause.kind == "rate_limited"
    other = decide(state, "b", "w2", _cost(10), T0 + 1, LIM)
    assert other.paused and other.wait_until == T0 + 20
    assert other.reason == "the model provider rate-limited this key (429)"
    assert state.rate_limited == 1


def test_a_429_without_retry_after_backs_off_and_doubles() -> None:
    state = _learned()
    for n, expected in ((1, 10.0), (2, 20.0)):
        assert decide(state, f"r{n}", "w", _cost(1), T0 + 1000 * n, LIM).granted
        pause = settle(state, f"r{n}", T0 + 1000 * n, 429, NO_READING, NOT_CHARGED, LIM)
        assert pause is not None and pause.until == T0 + 1000 * n + expected


def test_529_backs_the_key_off_exponentially_with_jitter_and_success_resets_it() -> None:
    state = _learned()
    waits = []
    for n in range(1, 4):
        now = T0 + 100 * n
        assert decide(state, f"o{n}", "w", _cost(1), now, LIM).granted
        pause = settle(state, f"o{n}", now, 529, NO_READING, NOT_CHARGED, LIM, jitter=0.0)
        assert pause is not None and pause.kind == "overloaded"
        waits.append(pause.until - now)
    assert waits == [1.0, 2.0, 4.0]  # 2, 4, 8 s times the lowest jitter (0.5)
    assert decide(state, "ok", "w", _cost(1), T0 + 1000, LIM).granted
    settle(state, "ok", T0 + 1000, 200, NO_READING, Charged(1, 1), LIM)
    assert state.overload_strikes == 0


def test_state_round_trips_through_its_json_form() -> None:
    state = _learned()
    decide(state, "a", "w", _cost(100), T0, LIM)
    again = KeyState.from_dict({**state.to_dict(), "from_a_newer_version": 1})
    assert again == state


def test_rate_limit_headers_are_read_and_bad_values_skipped() -> None:
    reading = read_headers(
        {
            "anthropic-ratelimit-input-tokens-limit": "40000",
            "anthropic-ratelimit-input-tokens-remaining": "39000",
            "anthropic-ratelimit-input-tokens-reset": "2023-11-14T22:13:21Z",
            "anthropic-ratelimit-requests-limit": "fifty",
            "retry-after": "12",
        }
    )
    assert reading.limit == {"input-tokens": 40000}
    assert reading.remaining == {"input-tokens": 39000}
    assert reading.reset == {"input-tokens": 1_700_000_001.0}
    assert reading.retry_after == 12.0


def test_a_call_left_in_flight_by_a_process_that_ended_does_not_hold_the_key() -> None:
    import subprocess
    import sys

    from agents.processes import this_process
    from agents.ratelimit.anthropic.meters import Hold

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    host = this_process().rsplit(":", 2)[0]
    state = KeyState()
    # A probe the killed process sent before the key's limits were known: every other call
    # waited behind it for inflight_ttl.
    state.holds["theirs"] = Hold(1000, 100, T0 - 5, "w-gone", f"{host}:{child.pid}:0123456789ab")
    decision = decide(state, "mine", "w1", _cost(1000), T0, LIM)
    assert decision.granted, decision.reason
    assert list(state.holds) == ["mine"] and state.holds["mine"].holder == this_process()


def test_a_call_in_flight_in_a_live_process_or_elsewhere_still_holds_the_key() -> None:
    import os

    from agents.processes import this_process
    from agents.ratelimit.anthropic.meters import Hold

    host = this_process().rsplit(":", 2)[0]
    for holder in (f"{host}:{os.getppid()}:0123456789ab", "elsewhere:1:0123456789ab", ""):
        state = KeyState()
        state.holds["theirs"] = Hold(1000, 100, T0 - 5, "w-other", holder)
        waiting = decide(state, "mine", "w1", _cost(1000), T0, LIM)
        assert not waiting.granted and waiting.reason == "learning the key's limits"
        assert decide(state, "mine", "w1", _cost(1000), T0 + LIM.inflight_ttl + 1, LIM).granted
