"""Discovery lists open PRs over GraphQL (issue 23): every PR of a long listing, each PR's
reviews from the same answer, REST only for a PR with more reviews than the listing holds, and
the bot known by GitHub's type for it, never by a login a person can register."""

from __future__ import annotations

import pytest

from agents.github.pull_listing import LAST_REVIEWS, PAGE_PULLS
from agents.planning.discover import Discovery
from agents.posting.keys import review_key, with_marker
from agents.wiring import Runtime
from flows.run.discovery import discover
from sandbox.github.model import Review
from sandbox.github.seed import REVIEWER_BOT, WIDGETS, WIDGETS_PR_DEBUG_PRINT, generate_pulls
from tests.security.conftest import as_user
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio

PR = WIDGETS_PR_DEBUG_PRINT
REVIEWS = "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"


async def _discover(runtime: Runtime) -> Discovery:
    return await discover(runtime, [WIDGETS], "reviewer", "summarizer", None, None)


def _head(swarm: Swarm, number: int = PR) -> str:
    pull = swarm.sandbox.state.pull(WIDGETS, number).pull
    assert pull is not None
    return pull.head_sha


def _bot_review_at_head(swarm: Swarm, number: int = PR) -> None:
    """The bot's own review with its marker at the head, as a run whose store was lost left it."""
    state = swarm.sandbox.state
    with state.lock:
        pull = state.pull(WIDGETS, number).pull
        assert pull is not None
        key = review_key(WIDGETS, number, pull.head_sha, "reviewer")
        pull.reviews.append(
            Review(
                id=state.next_id(),
                pull_number=number,
                user_login=REVIEWER_BOT,
                body=with_marker("Reviewed.", key),
                state="COMMENTED",
                commit_id=pull.head_sha,
                at=state.clock.now(),
            )
        )


def _rest_reads(swarm: Swarm, route: str) -> int:
    return sum(1 for r in swarm.sandbox.state.requests if r.route == route and r.method == "GET")


async def test_a_listing_longer_than_a_page_is_read_whole_without_a_rest_read_per_pr(
    swarm: Swarm,
) -> None:
    state = swarm.sandbox.state
    generate_pulls(state, WIDGETS, 2 * PAGE_PULLS + 5)
    open_prs = sorted(
        n for n, i in state.repo(WIDGETS).issues.items() if i.pull and i.state == "open"
    )
    before = len(state.requests)

    found = await _discover(swarm.runtime)

    planned = sorted({t.number or 0 for t in found.items} | {s.number for s in found.skipped})
    assert planned == open_prs
    made = state.requests[before:]
    assert not [r for r in made if r.route == "/repos/{owner}/{repo}/pulls"]
    assert not [r for r in made if r.route == REVIEWS]
    listing_pages = [r for r in made if r.route == "/graphql"]
    assert len(listing_pages) >= 3  # three pages of 50, plus the identity check


async def test_the_bots_marker_in_the_listing_skips_a_pr_reviewed_before_the_store_was_lost(
    swarm: Swarm,
) -> None:
    _bot_review_at_head(swarm)

    found = await _discover(swarm.runtime)

    assert PR not in [t.number for t in found.items]
    assert (PR, "already_reviewed") in [(s.number, s.reason) for s in found.skipped]
    assert _rest_reads(swarm, REVIEWS) == 0


async def test_a_pr_with_more_reviews_than_the_listing_holds_is_read_over_rest(
    swarm: Swarm,
) -> None:
    _bot_review_at_head(swarm)
    with as_user(swarm.sandbox, "octo-maintainer") as maintainer:
        for n in range(LAST_REVIEWS + 1):
            answer = maintainer.post(
                f"/repos/{WIDGETS}/pulls/{PR}/reviews",
                json={"body": f"note {n}", "event": "COMMENT"},
            )
            assert answer.status_code == 200, answer.text

    found = await _discover(swarm.runtime)

    # The bot's review is older than the newest LAST_REVIEWS: REST finds its marker.
    assert (PR, "already_reviewed") in [(s.number, s.reason) for s in found.skipped]
    assert _rest_reads(swarm, REVIEWS) == 1


async def test_a_person_whose_login_is_the_apps_slug_is_not_the_bot(swarm: Swarm) -> None:
    # GraphQL names the App's bot by its slug without "[bot]"; a person can register that slug
    # as a user login, and paste the bot's marker into a review of their own.
    slug = REVIEWER_BOT.removesuffix("[bot]")
    key = review_key(WIDGETS, PR, _head(swarm), "reviewer")
    with as_user(swarm.sandbox, slug) as impostor:
        answer = impostor.post(
            f"/repos/{WIDGETS}/pulls/{PR}/reviews",
            json={"body": with_marker("Already reviewed.", key), "event": "COMMENT"},
        )
        assert answer.status_code == 200, answer.text

    found = await _discover(swarm.runtime)

    assert PR in [t.number for t in found.items]
    assert (PR, "already_reviewed") not in [(s.number, s.reason) for s in found.skipped]


async def test_a_bot_author_is_named_as_rest_names_it_for_the_repositorys_skip_rules(
    swarm: Swarm,
) -> None:
    state = swarm.sandbox.state
    state.add_user("dependabot[bot]", type="Bot")
    bumped = state.add_pull(
        WIDGETS, "Bump a pin", {"requirements.txt": "x==2\n"}, author="dependabot[bot]"
    )
    state.commit_to_branch(
        WIDGETS, {".github/swarm.yaml": "skip:\n  authors: ['dependabot[bot]']\n"}
    )

    found = await _discover(swarm.runtime)

    reasons = {s.number: s.reason for s in found.skipped}
    assert bumped.number not in [t.number for t in found.items]
    assert reasons.get(bumped.number) not in (None, "already_reviewed", "unreadable")
