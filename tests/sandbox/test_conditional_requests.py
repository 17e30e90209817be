"""Conditional reads as GitHub answers them: a 304 for an unchanged answer costs no primary
point, and an ETag holds only for the credential that got it."""

from __future__ import annotations

import httpx

from sandbox.github.seed import REVIEWER_BOT, REVIEWER_INSTALLATION_ID, WIDGETS
from sandbox.server import SandboxServer

PULLS = f"/repos/{WIDGETS}/pulls"


def _get(server: SandboxServer, token: str, etag: str | None = None) -> httpx.Response:
    headers = {"Authorization": f"token {token}"}
    if etag:
        headers["If-None-Match"] = etag
    return httpx.get(server.url + PULLS, headers=headers)


def test_an_unchanged_answer_is_a_304_that_costs_no_primary_point(sandbox: SandboxServer) -> None:
    state = sandbox.state
    token = state.mint_token(REVIEWER_INSTALLATION_ID)
    first = _get(sandbox, token)
    assert first.status_code == 200 and first.headers["etag"].startswith('W/"')
    again = _get(sandbox, token, first.headers["etag"])
    assert again.status_code == 304 and again.content == b""
    assert again.headers["etag"] == first.headers["etag"]
    # The 304 left the primary budget where the first answer left it; its secondary point
    # was spent (GitHub exempts it from the primary limit only).
    assert again.headers["x-ratelimit-used"] == first.headers["x-ratelimit-used"] == "1"
    points = state.limiter.buckets(REVIEWER_BOT).rest_points.used
    assert points == 2


def test_a_changed_answer_comes_in_full_with_a_new_etag(sandbox: SandboxServer) -> None:
    state = sandbox.state
    token = state.mint_token(REVIEWER_INSTALLATION_ID)
    first = _get(sandbox, token)
    state.add_pull(WIDGETS, "Another change", {"NEWS.md": "news\n"}, author="alice-dev")
    changed = _get(sandbox, token, first.headers["etag"])
    assert changed.status_code == 200
    assert changed.headers["etag"] != first.headers["etag"]
    assert changed.headers["x-ratelimit-used"] == "2"


def test_an_etag_holds_only_for_the_token_that_got_it(sandbox: SandboxServer) -> None:
    # GitHub's ETags are specific to the credential: a freshly minted token of the same
    # installation gets a full answer for unchanged data.
    state = sandbox.state
    first = _get(sandbox, state.mint_token(REVIEWER_INSTALLATION_ID))
    other = _get(sandbox, state.mint_token(REVIEWER_INSTALLATION_ID), first.headers["etag"])
    assert other.status_code == 200
    assert other.headers["etag"] != first.headers["etag"]
