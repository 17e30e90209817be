"""A reservation left by a process that died stops counting at once on its host (issue 28's
crash test: a receiver killed while its worker posted held every write of its identity "in
flight" for the ten minutes of ``inflight_ttl``); a live process's reservation still counts."""

from __future__ import annotations

import os
import subprocess
import sys

from agents.github import ThrottleLimits, classify_rest
from agents.processes import this_process
from agents.ratelimit.github.buckets import IdentityState, Reservation, decide

WRITE = classify_rest("POST", "/repos/o/r/pulls/1/reviews")
NOW = 1_000.0


def _state_with_a_write_held_by(holder: str) -> IdentityState:
    state = IdentityState()
    state.inflight["theirs"] = Reservation("core", 1, 5, True, NOW - 5, holder)
    return state


def _ended_process() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_write_left_in_flight_by_a_process_that_died_does_not_hold_the_next_write() -> None:
    host = this_process().rsplit(":", 2)[0]
    state = _state_with_a_write_held_by(f"{host}:{_ended_process()}:0123456789ab")
    decision = decide(state, WRITE, "mine", "w-1", NOW, ThrottleLimits())
    assert decision.granted, decision.reason
    assert list(state.inflight) == ["mine"]
    assert state.inflight["mine"].holder == this_process()


def test_a_write_in_flight_in_a_live_process_still_holds_the_next_write() -> None:
    host = this_process().rsplit(":", 2)[0]
    state = _state_with_a_write_held_by(f"{host}:{os.getppid()}:0123456789ab")
    decision = decide(state, WRITE, "mine", "w-1", NOW, ThrottleLimits())
    assert not decision.granted and decision.reason == "a mutation is in flight"


def test_another_hosts_write_and_an_unnamed_holder_count_until_their_age_runs_out() -> None:
    limits = ThrottleLimits()
    for holder in ("elsewhere:1:0123456789ab", ""):
        state = _state_with_a_write_held_by(holder)
        assert not decide(state, WRITE, "mine", "w-1", NOW, limits).granted
        later = NOW + limits.inflight_ttl + 1
        assert decide(state, WRITE, "mine", "w-1", later, limits).granted
