"""Per-identity primary and secondary limits, headers, the compressed clock and failure knobs."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Literal

import httpx
import pytest
from githubkit.exception import PrimaryRateLimitExceeded, RequestFailed, SecondaryRateLimitExceeded

from sandbox.github.clock import SandboxClock
from sandbox.github.limits import RateLimits
from sandbox.github.seed import REVIEWER_BOT, TRIAGE_BOT, TRIAGE_INSTALLATION_ID, WIDGETS_ISSUE_BUG
from sandbox.github.state import SandboxState
from sandbox.server import SandboxServer
from tests.sandbox.clients import token_client

Maker = Callable[[SandboxState], SandboxServer]


def _frozen_state(**limits: int) -> SandboxState:
    # speed 0: windows move only when a test advances the clock.
    return SandboxState(SandboxClock(speed=0), RateLimits(**limits))


def test_every_response_carries_rate_limit_headers(sandbox: SandboxServer) -> None:
    gh = token_client(sandbox.url, sandbox.state.mint_token(2001))
    first = gh.rest.repos.get("acme", "widgets")
    second = gh.rest.pulls.list("acme", "widgets")
    assert first.headers["x-ratelimit-limit"] == "5000"
    assert first.headers["x-ratelimit-resource"] == "core"
    assert (first.headers["x-ratelimit-used"], second.headers["x-ratelimit-used"]) == ("1", "2")
    assert second.headers["x-ratelimit-remaining"] == "4998"
    assert int(second.headers["x-ratelimit-reset"]) >= int(float(second.headers["x-sandbox-now"]))


def test_buckets_belong_to_identities(sandbox: SandboxServer) -> None:
    state = sandbox.state
    reviewer_a = token_client(sandbox.url, state.mint_token(2001))
    reviewer_b = token_client(sandbox.url, state.mint_token(2001, repositories=["widgets"]))
    triage = token_client(sandbox.url, state.mint_token(TRIAGE_INSTALLATION_ID))
    maintainer = token_client(sandbox.url, state.maintainer_pat)
    reviewer_a.rest.repos.get("acme", "widgets")
    used = reviewer_b.rest.repos.get("acme", "widgets").headers["x-ratelimit-used"]
    assert used == "2"  # two tokens of one installation share its bucket
    assert triage.rest.repos.get("acme", "widgets").headers["x-ratelimit-used"] == "1"
    assert maintainer.rest.repos.get("acme", "widgets").headers["x-ratelimit-used"] == "1"
    core = maintainer.rest.rate_limit.get().parsed_data.resources.core
    assert (core.used, core.remaining) == (1, 4999)  # /rate_limit itself is free
    assert {r.login for r in state.requests} == {REVIEWER_BOT, TRIAGE_BOT, "octo-maintainer"}
    assert state.counter(REVIEWER_BOT).requests == 2


@pytest.mark.parametrize("status", [403, 429])
def test_primary_limit_exhaustion(make_sandbox: Maker, status: Literal[403, 429]) -> None:
    state = _frozen_state(core=2)
    state.knobs.primary_limit_status = status
    srv = make_sandbox(state)
    gh = token_client(srv.url, state.mint_token(2001))
    gh.rest.repos.get("acme", "widgets")
    gh.rest.repos.get("acme", "widgets")
    with pytest.raises(PrimaryRateLimitExceeded) as info:
        gh.rest.repos.get("acme", "widgets")
    resp = info.value.response
    assert resp.status_code == status
    assert resp.headers["x-ratelimit-remaining"] == "0"
    assert resp.json()["message"].startswith("API rate limit exceeded for installation ID 2001.")
    # Another identity is untouched.
    other = token_client(srv.url, state.maintainer_pat)
    assert other.rest.repos.get("acme", "widgets").status_code == 200
    assert state.counter(REVIEWER_BOT).primary_limited == 1


def test_primary_window_resets_after_an_hour_of_sandbox_time(make_sandbox: Maker) -> None:
    state = _frozen_state(core=1)
    srv = make_sandbox(state)
    gh = token_client(srv.url, state.maintainer_pat)
    reset = int(gh.rest.repos.get("acme", "widgets").headers["x-ratelimit-reset"])
    with pytest.raises(PrimaryRateLimitExceeded):
        gh.rest.repos.get("acme", "widgets")
    state.clock.advance(reset - state.clock.now())
    assert gh.rest.repos.get("acme", "widgets").headers["x-ratelimit-used"] == "1"


def test_rest_points_per_minute_count_writes_as_five(make_sandbox: Maker) -> None:
    state = _frozen_state(rest_points_per_window=11)
    srv = make_sandbox(state)
    gh = token_client(srv.url, state.mint_token(2001))
    gh.rest.issues.add_labels("acme", "widgets", WIDGETS_ISSUE_BUG, data={"labels": ["a"]})
    gh.rest.issues.add_labels("acme", "widgets", WIDGETS_ISSUE_BUG, data={"labels": ["b"]})
    gh.rest.repos.get("acme", "widgets")  # 11 points
    with pytest.raises(SecondaryRateLimitExceeded) as info:
        gh.rest.repos.get("acme", "widgets")
    resp = info.value.response
    assert resp.status_code == 403
    assert resp.json()["message"].startswith("You have exceeded a secondary rate limit.")
    assert resp.headers["retry-after"] == "60"
    state.clock.advance(60)
    assert gh.rest.repos.get("acme", "widgets").status_code == 200


def test_secondary_limit_without_retry_after_header(make_sandbox: Maker) -> None:
    state = _frozen_state(rest_points_per_window=1)
    state.knobs.secondary_retry_after = False
    srv = make_sandbox(state)
    gh = token_client(srv.url, state.maintainer_pat)
    gh.rest.repos.get("acme", "widgets")
    with pytest.raises(RequestFailed) as info:
        gh.rest.repos.get("acme", "widgets")
    # githubkit cannot tell this apart from any 403: the body is the only clue.
    assert not isinstance(info.value, SecondaryRateLimitExceeded)
    assert "retry-after" not in info.value.response.headers
    assert "secondary rate limit" in info.value.response.json()["message"]


def test_content_creation_caps_per_minute_and_per_hour(make_sandbox: Maker) -> None:
    state = _frozen_state(content_per_window=2, content_per_hour=3)
    srv = make_sandbox(state)
    gh = token_client(srv.url, state.mint_token(2001))

    def comment() -> None:
        gh.rest.issues.create_comment("acme", "widgets", WIDGETS_ISSUE_BUG, body="note")

    comment()
    comment()
    with pytest.raises(SecondaryRateLimitExceeded):
        comment()
    state.clock.advance(61)
    comment()
    with pytest.raises(SecondaryRateLimitExceeded) as info:
        comment()  # the hourly cap holds though the minute window reset
    assert int(info.value.response.headers["retry-after"]) > 3000
    created = [r for r in state.requests if r.is_content_creation and r.status == 201]
    assert len(created) == 3 and state.counter(REVIEWER_BOT).content_creations == 3


def test_graphql_primary_exhaustion_answers_200_rate_limited(make_sandbox: Maker) -> None:
    state = _frozen_state(graphql=1)
    srv = make_sandbox(state)
    gh = token_client(srv.url, state.mint_token(2001))
    assert gh.graphql.request("{ rateLimit { remaining used } }") == {
        "rateLimit": {"remaining": 0, "used": 1}
    }
    raw = gh.request("POST", "/graphql", json={"query": "{ viewer { login } }"})
    assert raw.status_code == 200
    assert raw.json()["errors"][0]["type"] == "RATE_LIMITED"
    assert raw.json()["errors"][0]["message"] == "API rate limit exceeded for installation ID 2001."
    assert (
        raw.headers["x-ratelimit-remaining"] == "0"
        and raw.headers["x-ratelimit-resource"] == "graphql"
    )
    with pytest.raises(PrimaryRateLimitExceeded):
        gh.graphql.request("{ viewer { login } }")
    # REST is a different bucket.
    assert gh.rest.repos.get("acme", "widgets").status_code == 200


def test_graphql_mutations_cost_five_secondary_points(make_sandbox: Maker) -> None:
    state = _frozen_state(graphql_points_per_window=6)
    srv = make_sandbox(state)
    gh = token_client(srv.url, state.mint_token(2001))
    node = gh.rest.pulls.get("acme", "widgets", 1).parsed_data.node_id
    mutation = (
        "mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id}) "
        "{ pullRequest { id } } }"
    )
    gh.graphql.request(mutation, {"id": node})
    gh.graphql.request("{ viewer { login } }")
    with pytest.raises(SecondaryRateLimitExceeded):
        gh.graphql.request("{ viewer { login } }")


def test_concurrency_cap_refuses_the_request_over_the_limit(make_sandbox: Maker) -> None:
    state = SandboxState(limits=RateLimits(concurrency=2))
    release = threading.Event()
    state.knobs.hold = release
    srv = make_sandbox(state)
    token = state.maintainer_pat
    statuses: list[int] = []

    def call() -> None:
        resp = httpx.get(
            f"{srv.url}/repos/acme/widgets", headers={"Authorization": f"token {token}"}, timeout=30
        )
        statuses.append(resp.status_code)

    threads = [threading.Thread(target=call) for _ in range(5)]
    for t in threads:
        t.start()
    # Two requests sit in flight; the other three are refused while they wait.
    while len(statuses) < 3:
        threads[0].join(0.01)
    assert statuses == [403, 403, 403]
    assert state.limiter.buckets("octo-maintainer").in_flight == 2
    release.set()
    for t in threads:
        t.join()
    assert sorted(statuses) == [200, 200, 403, 403, 403]
    assert state.limiter.buckets("octo-maintainer").in_flight == 0
    assert state.counter("octo-maintainer").secondary_limited == 3


def test_injected_failures_hit_the_named_route_only(sandbox: SandboxServer) -> None:
    state = sandbox.state
    state.inject_failure("/repos/{owner}/{repo}/pulls", status=502, count=2)
    gh = token_client(sandbox.url, state.maintainer_pat)
    assert gh.rest.repos.get("acme", "widgets").status_code == 200
    for _ in range(2):
        with pytest.raises(RequestFailed) as info:
            gh.rest.pulls.list("acme", "widgets")
        assert info.value.response.status_code == 502
    assert gh.rest.pulls.list("acme", "widgets").status_code == 200
    pulls = [r for r in state.requests if r.route == "/repos/{owner}/{repo}/pulls"]
    assert [r.status for r in pulls] == [502, 502, 200]
    assert all(r.login == "octo-maintainer" and r.method == "GET" and not r.is_write for r in pulls)


def test_compressed_clock_runs_an_hour_in_ten_seconds() -> None:
    clock = SandboxClock.compressed(3600, 10)
    assert clock.speed == 360
    clock.set_speed(0)
    before = clock.now()
    clock.advance(3600)
    assert clock.now() == before + 3600
    with pytest.raises(ValueError, match="SandboxClock speed must be >= 0, got -1"):
        clock.set_speed(-1)
