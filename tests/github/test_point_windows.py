"""GitHub counts a request's secondary points when it arrives, a moment after the throttle let it
go. Grants spread to keep every window of grants within the cap could still put more than the
cap into a window of arrivals; the throttle spaces its point grants over a window longer by
``points_window_margin``, so arrivals up to that late stay within GitHub's cap too."""

from __future__ import annotations

import pytest

from agents.ratelimit.github.buckets import IdentityState, decide
from agents.ratelimit.github.limits import ThrottleLimits
from agents.ratelimit.github.readings import Answer, observe
from agents.ratelimit.github.requests import classify_rest
from sandbox.github.limits import peak_in_any_window

MINUTE_S = 15.0
CAP = 900
BURST = 100  # more than the throttle lets go at once (a tenth of the cap)


def _arrivals(lim: ThrottleLimits, lateness: float, requests: int = 2000) -> list[float]:
    """A client that sends each read as soon as it is granted; the first burst arrives
    ``lateness`` seconds after its grants, the rest at once (late ones bunch with prompt ones)."""
    state = IdentityState()
    spec = classify_rest("GET", "/repos/acme/widgets/pulls/1", lim)
    now, arrived = 0.0, []
    for n in range(requests):
        decision = decide(state, spec, f"r{n}", "w", now, lim)
        while not decision.granted:
            assert decision.wait_until is not None
            now = decision.wait_until
            decision = decide(state, spec, f"r{n}", "w", now, lim)
        observe(state, f"r{n}", spec, now, Answer(200, {}), lim)
        arrived.append(now + (lateness if n < BURST else 0.0))
    return arrived


@pytest.mark.parametrize("lateness", [0.0, 0.05, 0.4])
def test_reads_arriving_late_never_put_more_than_the_cap_in_any_minute(lateness: float) -> None:
    lim = ThrottleLimits(rest_points_per_minute=CAP, minute_s=MINUTE_S)
    assert lateness < lim.points_window_margin
    assert peak_in_any_window(_arrivals(lim, lateness), MINUTE_S) <= CAP


def test_without_the_margin_late_arrivals_pass_the_cap() -> None:
    lim = ThrottleLimits(rest_points_per_minute=CAP, minute_s=MINUTE_S, points_window_margin=0)
    assert peak_in_any_window(_arrivals(lim, 0.4), MINUTE_S) > CAP
