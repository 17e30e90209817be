"""The demo's closing line counts the reviews the bot posted, not the bodyless review GitHub
files each of the bot's thread replies under (the sandbox files them as GitHub does)."""

from __future__ import annotations

from flows.cli.demo import _count_bot_reviews
from sandbox.github.feedback import reply
from sandbox.github.model import Review, ReviewComment
from sandbox.github.seed import REVIEWER_BOT, WIDGETS, WIDGETS_PR_DEBUG_PRINT, seed_state
from sandbox.github.state import SandboxState


def test_the_demo_counts_the_bots_reviews_and_not_its_thread_replies() -> None:
    state = SandboxState()
    seed_state(state)
    pull = state.pull(WIDGETS, WIDGETS_PR_DEBUG_PRINT).pull
    assert pull is not None
    pull.reviews.append(
        Review(
            state.next_id(),
            WIDGETS_PR_DEBUG_PRINT,
            REVIEWER_BOT,
            "Two findings.",
            "COMMENTED",
            pull.head_sha,
            state.clock.now(),
        )
    )
    assert _count_bot_reviews(state) == 1
    # A thread of the bot's, and the bot's own note in it: GitHub files the note under a review.
    root = ReviewComment(
        state.next_id(),
        pull.reviews[-1].id,
        WIDGETS_PR_DEBUG_PRINT,
        "a.py",
        "finding",
        pull.head_sha,
        1,
        "RIGHT",
        1,
        "@@",
        REVIEWER_BOT,
        state.clock.now(),
    )
    pull.review_comments.append(root)
    reply(state, WIDGETS, root.id, "Fixed at the new head.", REVIEWER_BOT)
    assert len([r for r in pull.reviews if r.user_login == REVIEWER_BOT]) == 2
    assert _count_bot_reviews(state) == 1
