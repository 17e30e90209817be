"""GraphQL as GitHub prices it (issue 36): the installation's hourly limit is what GitHub's
answers say (10,000 points for an installation on an Enterprise Cloud organization, not an
assumed 5,000); a listing page GitHub stops at its 10 s limit is asked again with fewer PRs, not
hammered; and a 502/504 on GraphQL is spent budget, not given back."""

from __future__ import annotations

import pytest

from agents.github.pull_listing import PAGE_SIZES
from agents.ratelimit.github.buckets import BucketState, IdentityState, Reservation
from agents.ratelimit.github.limits import ThrottleLimits
from agents.ratelimit.github.readings import Answer, observe
from agents.ratelimit.github.requests import classify_graphql
from sandbox.github.limits import RateLimits
from sandbox.github.seed import WIDGETS
from sandbox.github.state import SandboxState
from sandbox.server import SandboxServer
from tests.github.sandbox_helpers import reviewer_gateway

pytestmark = pytest.mark.anyio

CONFIG = ".github/swarm.yaml"


def _graphql_bucket(gateway: object) -> BucketState:
    throttle = gateway.throttle  # type: ignore[attr-defined]
    return throttle.backend.transact(throttle.identity, lambda s: s.buckets["graphql"])  # type: ignore[no-any-return]


async def test_the_graphql_limit_is_the_one_githubs_answer_names_10000_for_enterprise_cloud() -> (
    None
):
    with SandboxServer(SandboxState(limits=RateLimits(graphql=10_000))) as server:
        gateway = reviewer_gateway(server)
        try:
            listing = await gateway.list_open_pulls(WIDGETS, CONFIG)
            bucket = _graphql_bucket(gateway)
        finally:
            await gateway.aclose()
    assert listing.pulls
    assert bucket.limit == 10_000 and bucket.remaining is not None and bucket.remaining > 9_000


async def test_a_timed_out_listing_page_is_asked_again_smaller_and_the_listing_completes() -> None:
    with SandboxServer() as server:
        state = server.state
        open_pulls = sorted(i.number for i in state.repo(WIDGETS).pulls() if i.state == "open")
        # A page of 50 runs past GitHub's 10 s; one of 25 does not.
        state.knobs.graphql_listing_times_out_over = PAGE_SIZES[1]
        gateway = reviewer_gateway(server)
        try:
            listing = await gateway.list_open_pulls(WIDGETS, CONFIG)
            bucket = _graphql_bucket(gateway)
        finally:
            await gateway.aclose()
        asked = [r.status for r in state.requests if r.route == "/graphql"]
    assert sorted(p["number"] for p in listing.pulls) == open_pulls
    assert asked == [502, 200]  # once at 50, then 25: never the same page again
    # Both were charged: the timed-out page's points are spent.
    assert bucket.used == 2


async def test_a_timed_out_page_at_the_smallest_size_fails_without_asking_again() -> None:
    from agents.github.errors import GitHubApiError

    with SandboxServer() as server:
        server.state.knobs.graphql_listing_times_out_over = 1
        gateway = reviewer_gateway(server)
        try:
            with pytest.raises(GitHubApiError) as failed:
                await gateway.list_open_pulls(WIDGETS, CONFIG)
        finally:
            await gateway.aclose()
        asked = [r.status for r in server.state.requests if r.route == "/graphql"]
    assert failed.value.status == 502
    assert asked == [502] * len(PAGE_SIZES)


def test_a_graphql_502_without_rate_limit_headers_is_counted_as_spent() -> None:
    spec = classify_graphql(is_mutation=False, creates_content=False, primary_cost=3)
    state = IdentityState()
    state.buckets["graphql"] = BucketState(limit=5000, remaining=4000, used=1000, reset=2e9)
    state.inflight["r1"] = Reservation("graphql", 3, 1, False, 0.0)
    observe(state, "r1", spec, 1.0, Answer(502, {}), ThrottleLimits())
    assert (state.buckets["graphql"].remaining, state.buckets["graphql"].used) == (3997, 1003)
    # A 500 is no timeout: nothing is assumed spent.
    state.inflight["r2"] = Reservation("graphql", 3, 1, False, 0.0)
    observe(state, "r2", spec, 1.0, Answer(500, {}), ThrottleLimits())
    assert state.buckets["graphql"].remaining == 3997
