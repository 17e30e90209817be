"""The identity layer's own calls as the bot (verifying and revoking a token) spend its budget.

Before, they bypassed the throttle: with one worker at a time, about half of each worker's REST
points (``GET /installation/repositories`` and the ``DELETE /installation/token`` write) and its
only GraphQL point (``viewer``) were invisible to it, and GitHub answered "You have exceeded a
secondary rate limit" to revokes and worker calls alike. Here the sandbox enforces secondary limits
small enough that such a run crosses them within a few workers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack

import anyio
import pytest

from agents.github import ThrottleLimits
from agents.github.identity_calls import IDENTITY_WORKER
from agents.identity.minter import InstallationMinter
from agents.wiring import Runtime
from sandbox.github.limits import RateLimits
from sandbox.github.seed import REVIEWER_BOT, WIDGETS, WIDGETS_PR_CLEAN
from sandbox.github.state import SandboxState
from sandbox.server import SandboxServer
from tests.store.backends import fresh_pg_schema
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio

WORKERS = 6
WINDOW_S = 1.0
IDENTITY_ROUTES = {"/graphql", "/installation/repositories", "/installation/token"}


@pytest.fixture
def sandbox(request: pytest.FixtureRequest) -> Iterator[SandboxServer]:
    """The sandbox the swarm talks to, with the secondary limits the test gives (indirect)."""
    state = SandboxState(limits=RateLimits(**request.param))
    state.knobs.keep_bodies = True  # which GraphQL requests were the identity check's
    with SandboxServer(state) as server:
        yield server


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def budget_in(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Where the bot's budget lives: this process, or the store's rows (SQLite, PostgreSQL)."""
    with ExitStack() as stack:
        if request.param != "memory":
            monkeypatch.setenv("SWARM_THROTTLE_BACKEND", "store")
        if request.param == "postgresql":
            url = stack.enter_context(fresh_pg_schema(request.getfixturevalue("pg_url")))
            monkeypatch.setenv("SWARM_STORE_URL", url)
        yield request.param


def _sandbox_allows(**points: int) -> pytest.MarkDecorator:
    """The sandbox's secondary limits for the test: ``points`` per window of ``WINDOW_S``."""
    limits = {**points, "secondary_window_s": WINDOW_S}
    return pytest.mark.parametrize("sandbox", [limits], indirect=True)


def _paced_swarm(make_swarm: Callable[..., Swarm], **points: int) -> Swarm:
    # The sandbox's numbers over a window a fifth longer (GitHub counts on arrival, a little after
    # our clock saw a request leave); no spacing between writes, so the points bind.
    limits = ThrottleLimits(minute_s=WINDOW_S * 1.2, min_write_interval=0.0, **points)
    return make_swarm(dry_run=True, throttle_limits=limits)


def _counted_by_the_throttle(runtime: Runtime) -> dict[str, int]:
    throttle = runtime.throttle(REVIEWER_BOT)
    return throttle.backend.transact(REVIEWER_BOT, lambda s: dict(s.requests_by_worker))


def _identity_calls_sent(swarm: Swarm) -> int:
    """The bot's identity calls the sandbox received: GraphQL's ``viewer`` and the two REST
    routes (the guidance files of the base commit come over GraphQL too, as a worker's call)."""
    return sum(
        r.route in IDENTITY_ROUTES and (r.route != "/graphql" or "viewer" in str(r.sent))
        for r in swarm.sandbox.state.requests_by(REVIEWER_BOT)
    )


@_sandbox_allows(rest_points_per_window=30)
async def test_workers_one_after_another_stay_within_the_rest_points_their_revokes_spend_too(
    budget_in: str, make_swarm: Callable[..., Swarm]
) -> None:
    outcomes = []
    async with _paced_swarm(make_swarm, rest_points_per_minute=30) as swarm:
        for _ in range(WORKERS):
            sealed = await swarm.dispatch(swarm.pull_task(WIDGETS, WIDGETS_PR_CLEAN))
            outcomes.append(await swarm.run(sealed))
            # The worker's token dies with it: a revoke, a write of 5 points.
            await swarm.runtime.dispatcher.release(sealed)
        counted = _counted_by_the_throttle(swarm.runtime)
        stats = swarm.runtime.dispatcher.source("default").stats

    counters = swarm.sandbox.state.counter(REVIEWER_BOT)
    assert (counters.secondary_limited, counters.primary_limited) == (0, 0)
    assert [o.status for o in outcomes] == ["succeeded"] * WORKERS, [o.reason for o in outcomes]
    assert (stats.revocations, stats.revocation_failures) == (WORKERS, 0)
    # Per worker: viewer, GET /installation/repositories, DELETE /installation/token.
    assert counted[IDENTITY_WORKER] == 3 * WORKERS == _identity_calls_sent(swarm)
    assert sum(counted.values()) == counters.requests


@_sandbox_allows(graphql_points_per_window=3)
async def test_verifying_one_token_after_another_stays_within_the_graphql_points(
    budget_in: str, make_swarm: Callable[..., Swarm]
) -> None:
    verified = []
    async with _paced_swarm(make_swarm, graphql_points_per_minute=3) as swarm:
        for _ in range(WORKERS):
            # Each discovery mints, verifies (the viewer query is GraphQL) and revokes its token.
            async with swarm.runtime.discovery("default", [WIDGETS]) as (_gateway, login):
                verified.append(login)
        counted = _counted_by_the_throttle(swarm.runtime)

    counters = swarm.sandbox.state.counter(REVIEWER_BOT)
    assert (counters.secondary_limited, counters.primary_limited) == (0, 0)
    assert verified == [REVIEWER_BOT] * WORKERS
    assert counted == {IDENTITY_WORKER: 3 * WORKERS}
    assert _identity_calls_sent(swarm) == counters.requests == 3 * WORKERS


# The sandbox allows 6 REST points per 2 s (the App's GET /app and mint fit); the throttle believes
# GitHub's 900 a minute, so after verification's read and one of the bot's own (2 points) it lets
# the revoke (5 points) go: GitHub refuses it.
TIGHT = {"rest_points_per_window": 6, "secondary_window_s": 2.0}


def _revokes(swarm: Swarm) -> list[tuple[int, str | None]]:
    requests = swarm.sandbox.state.requests_by(REVIEWER_BOT)
    return [(r.status, r.limited) for r in requests if r.route == "/installation/token"]


@pytest.mark.parametrize("sandbox", [TIGHT], indirect=True)
async def test_a_rate_limited_revoke_waits_out_its_pause_and_goes_through(
    make_swarm: Callable[..., Swarm],
) -> None:
    async with make_swarm() as swarm:
        async with swarm.runtime.discovery("default", [WIDGETS]) as (gateway, _login):
            await gateway.get_pull(WIDGETS, WIDGETS_PR_CLEAN)
        # Leaving revoked the token: the secondary limit answered, its pause was waited out.
        stats = swarm.runtime.dispatcher.source("default").stats
        assert (stats.revocations, stats.revocation_failures) == (1, 0)
        state = swarm.runtime.throttle(REVIEWER_BOT).backend.transact(REVIEWER_BOT, lambda s: s)
        assert state.rate_limited_responses == 1
    assert _revokes(swarm) == [(403, "secondary"), (204, None)]


@pytest.mark.parametrize("sandbox", [TIGHT], indirect=True)
async def test_a_revoke_paused_too_long_to_wait_is_retried_when_the_run_ends(
    make_swarm: Callable[..., Swarm],
) -> None:
    swarm = make_swarm(throttle_limits=ThrottleLimits(max_inline_wait=0.1))
    source = swarm.runtime.dispatcher.source("default")
    assert isinstance(source, InstallationMinter)
    async with swarm.runtime.discovery("default", [WIDGETS]) as (gateway, _login):
        await gateway.get_pull(WIDGETS, WIDGETS_PR_CLEAN)
    # The release returned: the pause was reported and the token kept, nothing raised.
    assert (source.stats.revocations, source.stats.revocation_failures) == (0, 1)
    kept = source.live_fingerprints()
    assert len(kept) == 1
    await anyio.sleep(2.5)  # the pause (GitHub's retry-after) is over
    await swarm.runtime.aclose()
    assert (source.stats.revocations, source.stats.revocation_failures) == (1, 1)
    assert _revokes(swarm) == [(403, "secondary"), (204, None)]


@_sandbox_allows(rest_points_per_window=30)
async def test_limits_an_operator_sets_in_the_environment_are_the_ones_kept(
    make_swarm: Callable[..., Swarm], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A GitHub Enterprise Server whose administrators allow 30 REST points a (short) minute.
    for field, value in {
        "REST_POINTS_PER_MINUTE": "30",
        "MINUTE_S": str(WINDOW_S * 1.2),
        "MIN_WRITE_INTERVAL": "0",
    }.items():
        monkeypatch.setenv(f"SWARM_GITHUB_LIMITS__{field}", value)
    async with make_swarm(dry_run=True) as swarm:
        assert swarm.runtime.throttle(REVIEWER_BOT).limits.rest_points_per_minute == 30
        for _ in range(WORKERS):
            sealed = await swarm.dispatch(swarm.pull_task(WIDGETS, WIDGETS_PR_CLEAN))
            outcome = await swarm.run(sealed)
            assert outcome.status == "succeeded", outcome.reason
            await swarm.runtime.dispatcher.release(sealed)
    counters = swarm.sandbox.state.counter(REVIEWER_BOT)
    assert (counters.secondary_limited, counters.primary_limited) == (0, 0)
