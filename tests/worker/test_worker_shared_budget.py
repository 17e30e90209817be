"""With ``SWARM_THROTTLE_BACKEND=store`` a worker's GitHub budget lives in the store."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from sandbox.github.seed import WIDGETS, WIDGETS_PR_CLEAN
from tests.json_access import obj
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio


async def test_the_bot_budget_is_kept_in_the_store_shared_state_rows(
    make_swarm: Callable[..., Swarm], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWARM_THROTTLE_BACKEND", "store")
    async with make_swarm() as swarm:
        task = swarm.pull_task(WIDGETS, WIDGETS_PR_CLEAN)
        outcome = await swarm.run(await swarm.dispatch(task))
        store = swarm.runtime.store
        state = store.transact_state("swarm-reviewer[bot]", lambda doc: (doc, doc))
    assert outcome.status == "succeeded", outcome.reason
    # Verification's two reads (viewer, installation repositories) spend the bot's budget too.
    assert state["requests_by_worker"] == {outcome.worker_id: outcome.github_calls, "identity": 2}
    assert obj(obj(state["buckets"])["core"])["limit"] is not None
    assert state["inflight"] == {}
