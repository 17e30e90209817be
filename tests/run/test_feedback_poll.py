"""The learning poll of a polling run (issue 23): GitHub sends no webhook for a reaction, so
feedback is polled, but not on every run: at most once in ``learning_poll_interval_s`` per bot
and repository, and never in a repository where the bot has no review yet to learn from."""

from __future__ import annotations

from typing import Any

import pytest

from agents.store import Store
from sandbox.github.feedback import grant, reply
from sandbox.github.seed import MAINTAINER, REVIEWER_BOT, WIDGETS, WIDGETS_PR_DEBUG_PRINT
from tests.run.conftest import Swarm, run_swarm

pytestmark = pytest.mark.prefect

PR = WIDGETS_PR_DEBUG_PRINT
TARGET = f"{WIDGETS}#{PR}"
REPO_COMMENTS = f"/repos/{WIDGETS}/pulls/comments"


def _polls(swarm: Swarm, **parameters: Any) -> int:
    """How often a run of ``parameters`` read the repository's review comments."""
    start = len(swarm.state.requests)
    state, _report = run_swarm(**parameters)
    assert state.is_completed(), state.message
    return sum(
        1 for r in swarm.state.requests[start:] if r.method == "GET" and r.path == REPO_COMMENTS
    )


def _proposals(swarm: Swarm) -> list[Any]:
    with Store.open(None, swarm.data_dir) as store:
        return list(store.list_memories(repo=WIDGETS, states=("proposed",)))


def test_the_feedback_poll_waits_for_the_bots_first_review_and_then_its_interval(
    swarm: Swarm, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No review of the bot's in the repository yet: nothing to learn from, nothing read.
    assert _polls(swarm, targets=[TARGET]) == 0
    grant(swarm.state, WIDGETS, MAINTAINER, "admin")
    pull = swarm.state.pull(WIDGETS, PR).pull
    assert pull is not None
    finding = next(
        c for c in pull.review_comments if c.user_login == REVIEWER_BOT and "print(" in c.body
    )
    reply(swarm.state, WIDGETS, finding.id, "Not a problem: this module is a CLI.", MAINTAINER)
    # Within the interval (900 s by default) of the first run, the next run does not read it.
    assert _polls(swarm, targets=[TARGET]) == 0
    assert _proposals(swarm) == []
    # Once the interval is over (here: made 0), the next run reads it once and learns.
    monkeypatch.setenv("SWARM_LEARNING_POLL_INTERVAL_S", "0")
    assert _polls(swarm, targets=[TARGET]) == 1
    assert len(_proposals(swarm)) == 1
