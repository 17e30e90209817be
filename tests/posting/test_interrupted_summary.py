"""A review worker interrupted after its review was posted and before its summary: the next run
writes the summary from what the store kept (no model call), exactly once, even when that
finishing is interrupted too; a run after that writes nothing. On SQLite and PostgreSQL, through
the real worker against the sandbox GitHub, the interrupt landing deterministically while the
summary's request is held in flight (and never carried out)."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Callable, Iterator

import pytest

from agents.outcome import WorkerOutcome
from agents.posting.keys import review_key, summary_key
from sandbox.github.records import Rendezvous
from sandbox.github.seed import WIDGETS
from tests.posting.test_review_output import COMMENTS, PR, head, summaries
from tests.security.conftest import bot_reviews
from tests.store.backends import fresh_pg_schema
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio
INTERRUPTED = "interrupted before it ended (Ctrl-C, or the flow run was cancelled)"


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """The store the swarm uses: its SQLite file in tmp, or a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        yield None
        return
    with fresh_pg_schema(request.getfixturevalue("pg_url")) as url:
        yield url


@pytest.fixture
async def swarm_on(
    store_url: str | None, make_swarm: Callable[..., Swarm], monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Swarm]:
    if store_url is not None:
        monkeypatch.setenv("SWARM_STORE_URL", store_url)
    made = make_swarm()
    yield made
    await made.runtime.aclose()


async def interrupted_at_the_summary(swarm: Swarm) -> None:
    """Run a reviewer of the PR and interrupt it while its summary's request is in flight; the
    request is then refused (it never lands), and the run is ended as Ctrl-C ends it."""
    held = Rendezvous("POST", COMMENTS, parties=2, timeout_s=120, refuse=503)
    swarm.sandbox.state.knobs.rendezvous = held
    worker = asyncio.create_task(swarm.review(WIDGETS, PR))
    try:
        while held.arrived == 0:
            assert not worker.done(), worker.result()
            await asyncio.sleep(0.01)
    finally:
        worker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await worker
        held.release()
        swarm.sandbox.state.knobs.rendezvous = None
    store = swarm.runtime.store
    store.abandon_run(swarm.run_id, INTERRUPTED, status="cancelled")
    swarm.run_id = store.create_run("test")  # the next `swarm run`


async def next_run(swarm: Swarm) -> WorkerOutcome:
    outcome = await swarm.review(WIDGETS, PR)
    swarm.run_id = swarm.runtime.store.create_run("test")
    return outcome


def assert_finished_once(swarm: Swarm, outcome: WorkerOutcome) -> None:
    assert outcome.status == "succeeded", outcome.reason
    assert outcome.llm_calls == 0 and not outcome.posted  # the review was there already
    [review] = bot_reviews(swarm, WIDGETS, PR)
    [summary] = summaries(swarm)
    assert outcome.reason and f"#issuecomment-{summary.id}" in outcome.reason
    assert summary_key(WIDGETS, PR) in summary.body and "**Minor** (3)" in summary.body
    assert f"#pullrequestreview-{review.id})" in summary.body
    # The cost line is the review's, as its worker kept it before the interrupt.
    calls = re.search(r"(\d+) model call\(s\)", summary.body)
    assert calls is not None and int(calls[1]) > 0, summary.body
    key = review_key(WIDGETS, PR, head(swarm), "reviewer")
    known = swarm.runtime.store.get_review_key(key)
    assert known is not None and known.unfinished is None


async def test_a_review_interrupted_before_its_summary_gets_it_from_the_next_run_once(
    swarm_on: Swarm,
) -> None:
    swarm = swarm_on
    await interrupted_at_the_summary(swarm)
    assert len(bot_reviews(swarm, WIDGETS, PR)) == 1 and summaries(swarm) == []

    finished = await next_run(swarm)

    assert_finished_once(swarm, finished)
    writes = len(swarm.writes())
    again = await next_run(swarm)
    assert again.status == "skipped" and again.llm_calls == 0, again.reason
    assert len(swarm.writes()) == writes and len(summaries(swarm)) == 1


async def test_a_finishing_run_interrupted_too_leaves_one_summary_after_the_next(
    swarm_on: Swarm,
) -> None:
    swarm = swarm_on
    await interrupted_at_the_summary(swarm)
    await interrupted_at_the_summary(swarm)  # the finishing run, interrupted the same way
    assert summaries(swarm) == []

    finished = await next_run(swarm)

    assert_finished_once(swarm, finished)
    assert (await next_run(swarm)).status == "skipped"
    assert len(summaries(swarm)) == 1 and len(bot_reviews(swarm, WIDGETS, PR)) == 1
