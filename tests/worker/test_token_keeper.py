"""The run's hold on a scope's token (``flows/run/tokens.py``) never keeps a token alive that no
worker uses: when the minter hands later workers a fresh token (the held one is near its expiry),
the hold moves to it, and the old token is revoked with the last worker that still holds it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import anyio
import pytest

from agents.identity.minter import InstallationMinter
from flows.run.tokens import TokenKeeper
from sandbox.github.seed import WIDGETS, WIDGETS_PR_CLEAN
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio


def _live_review_tokens(swarm: Swarm) -> int:
    return sum(
        1
        for t in swarm.sandbox.state.tokens.values()
        if t.kind == "installation"
        and t.permissions.get("pull_requests") == "write"
        and not t.revoked
    )


async def test_a_token_past_its_refresh_point_is_revoked_with_its_last_worker_not_kept(
    make_swarm: Callable[..., Swarm],
) -> None:
    async with make_swarm(dry_run=True) as swarm:
        source = swarm.runtime.dispatcher.source("default")
        assert isinstance(source, InstallationMinter)
        # Tokens live an hour; with this margin one is no longer handed out a second after mint.
        source.refresh_margin = timedelta(hours=1) - timedelta(seconds=1)
        keeper = TokenKeeper(swarm.runtime.dispatcher)
        key = ("reviewer", WIDGETS)
        for _ in range(3):
            keeper.queue(key)
        task = swarm.pull_task(WIDGETS, WIDGETS_PR_CLEAN)

        first = await swarm.dispatch(task)
        await keeper.leave(key, first)  # two more queued: the run holds the first token
        await anyio.sleep(1.2)
        second = await swarm.dispatch(task)  # a fresh token: the first is past its refresh point
        await keeper.leave(key, second)
        assert _live_review_tokens(swarm) == 2
        await swarm.runtime.dispatcher.release(first)
        assert _live_review_tokens(swarm) == 1, "the first token outlived its last worker"

        third = await swarm.dispatch(task)
        await keeper.leave(key, third)  # the last queued: the run lets go
        for sealed in (second, third):
            await swarm.runtime.dispatcher.release(sealed)
        assert _live_review_tokens(swarm) == 0
