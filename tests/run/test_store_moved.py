"""A store moved with ``swarm store copy`` (SQLite to PostgreSQL, as issue 38 did it by hand): the
next run over the new store starts no worker for a pull request the old store saw reviewed."""

from __future__ import annotations

import pytest

from sandbox.github.seed import WIDGETS
from tests.cli.conftest import swarm as swarm_command
from tests.run.conftest import Swarm, run_swarm
from tests.store.backends import fresh_pg_schema

pytestmark = pytest.mark.prefect

PULL_FILES = "/repos/{owner}/{repo}/pulls/{pull_number}/files"


def test_a_run_over_the_copied_store_starts_no_worker_and_reads_no_pull_again(
    swarm: Swarm, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, first = run_swarm(repos=[WIDGETS])
    assert state.is_completed(), state.message
    assert first.new_reviews == 3
    reviews = swarm.review_counts()
    with fresh_pg_schema(pg_url) as new_store:
        seen = swarm_command("store", "copy", "--to", new_store)
        assert seen.code == 0, seen.output
        monkeypatch.setenv("SWARM_STORE_URL", new_store)
        asked_before = len(swarm.state.requests)
        state, again = run_swarm(repos=[WIDGETS])
    assert state.is_completed(), state.message
    assert again.outcomes == []
    assert (again.new_reviews, again.already_reviewed) == (0, 3)
    assert swarm.review_counts() == reviews
    # The store alone said "reviewed", before any pull request was read: an empty store at the
    # new URL (the move made by hand) reads each one's files and review markers to find out.
    asked = swarm.state.requests[asked_before:]
    assert [r.path for r in asked if r.route == PULL_FILES] == []
