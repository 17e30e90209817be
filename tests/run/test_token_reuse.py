"""Workers of one scope that follow each other share one installation token, which is still
revoked once the last of them ends: fewer mints, identity checks and revocations against the
identity's secondary limits, and no token left alive after the run."""

from __future__ import annotations

from collections import Counter

import pytest

from sandbox.github.model import Token
from tests.run.conftest import Swarm, run_swarm


def _review_tokens(swarm: Swarm) -> list[Token]:
    """Installation tokens minted for reviewing (discovery's read-only tokens left out)."""
    return [
        t
        for t in swarm.state.tokens.values()
        if t.kind == "installation" and t.permissions.get("pull_requests") == "write"
    ]


def test_workers_one_after_another_share_one_token_per_repository(swarm: Swarm) -> None:
    state, report = run_swarm(max_workers=1)
    assert state.is_completed(), state.message
    workers = [o for o in report.outcomes if o.status == "succeeded"]
    tokens = _review_tokens(swarm)
    per_repo = Counter(frozenset(t.repository_ids or ()) for t in tokens)
    assert len(workers) > len(per_repo) > 1
    assert set(per_repo.values()) == {1}, per_repo
    assert all(t.revoked for t in tokens), "every token dies with the last worker that held it"
    assert set(swarm.review_counts().values()) == {1}


def test_per_worker_tokens_are_never_kept_for_the_next_worker(
    swarm: Swarm, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWARM_PER_WORKER_TOKENS", "true")
    state, report = run_swarm(max_workers=1)
    assert state.is_completed(), state.message
    workers = [o for o in report.outcomes if o.worker_id != "-"]
    tokens = _review_tokens(swarm)
    assert len(tokens) == len(workers)
    assert all(t.revoked for t in tokens)
