"""Budget state in the store's shared rows, for any state type the rate-limit engine knows."""

from __future__ import annotations

from pathlib import Path

from agents.ratelimit import RowBackend
from agents.ratelimit.anthropic.meters import KeyState
from agents.ratelimit.github.buckets import IdentityState
from agents.store import Store


def _pause(state: IdentityState | KeyState) -> None:
    state.paused_until = 42.0


def test_a_state_written_through_the_rows_reads_back_in_another_backend(tmp_path: Path) -> None:
    with Store.open(None, tmp_path) as store:
        RowBackend(KeyState, store).transact("key-a", _pause)
        again = RowBackend(KeyState, store).transact("key-a", lambda s: s)
    assert again.paused_until == 42.0 and isinstance(again, KeyState)


def test_a_prefix_keeps_two_kinds_of_budget_apart_in_the_same_rows(tmp_path: Path) -> None:
    with Store.open(None, tmp_path) as store:
        github = RowBackend(IdentityState, store)
        llm = RowBackend(KeyState, store, prefix="llm:")
        github.transact("shared-name", _pause)
        assert llm.transact("shared-name", lambda s: s.paused_until) == 0.0
        assert github.transact("shared-name", lambda s: s.paused_until) == 42.0
