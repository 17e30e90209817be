"""A review worker interrupted after its review was posted and before its summary: the next run
writes the summary from what the store kept (no model call), exactly once, even when that
finishing is interrupted too; a run after that writes nothing. On SQLite and PostgreSQL, through
the real worker against the sandbox GitHub, the interrupt landing deterministically while the
summary's request is held in flight (and never carried out)."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TypeVar

import pytest

from agents.outcome import WorkerOutcome
from agents.posting.keys import review_key, summary_key
from agents.work import Task
from sandbox.github.records import Rendezvous
from sandbox.github.seed import REVIEWER_BOT, WIDGETS
from sandbox.server import SandboxServer
from tests.posting.test_review_output import (
    COMMENTS,
    PR,
    bot_threads,
    give_contents_write,
    head,
    push_without_the_print,
    replies,
    summaries,
)
from tests.security.conftest import bot_reviews
from tests.store.backends import fresh_pg_schema
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio
T = TypeVar("T")
SUMMARY_EDIT = "/repos/{owner}/{repo}/issues/comments/{comment_id}"
INTERRUPTED = "interrupted before it ended (Ctrl-C, or the flow run was cancelled)"


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """The store the swarm uses: its SQLite file in tmp, or a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        yield None
        return
    with fresh_pg_schema(request.getfixturevalue("pg_url")) as url:
        yield url


def swarm_in(
    store_url: str | None, make_swarm: Callable[..., Swarm], monkeypatch: pytest.MonkeyPatch
) -> Swarm:
    if store_url is not None:
        monkeypatch.setenv("SWARM_STORE_URL", store_url)
    return make_swarm()


@pytest.fixture
async def swarm_on(
    store_url: str | None, make_swarm: Callable[..., Swarm], monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Swarm]:
    async with swarm_in(store_url, make_swarm, monkeypatch) as made:
        yield made


async def interrupted_at_the_summary(
    swarm: Swarm, task: Task | None = None, write: tuple[str, str] = ("POST", COMMENTS)
) -> None:
    """Run a reviewer of the PR (``task``, else at its head) and interrupt it while its
    summary's ``write`` (its creation, or its edit) is in flight; the request is then refused
    (it never lands), and the run is ended as Ctrl-C ends it."""
    held = Rendezvous(*write, parties=2, timeout_s=120, refuse=503)
    swarm.sandbox.state.knobs.rendezvous = held
    sealed = await swarm.dispatch(task or swarm.pull_task(WIDGETS, PR))
    worker = asyncio.create_task(swarm.run(sealed))
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


async def while_at_the_summary(swarm: Swarm, meanwhile: Callable[[], Awaitable[T]]) -> T:
    """Run a reviewer of the PR at its head, hold its summary's creation in flight (its worker
    alive, its review posted), run ``meanwhile``, then let the summary land and the reviewer end."""
    held = Rendezvous("POST", COMMENTS, parties=2, timeout_s=120)
    swarm.sandbox.state.knobs.rendezvous = held
    sealed = await swarm.dispatch(swarm.pull_task(WIDGETS, PR))
    worker = asyncio.create_task(swarm.run(sealed))
    try:
        while held.arrived == 0:
            assert not worker.done(), worker.result()
            await asyncio.sleep(0.01)
        return await meanwhile()
    finally:
        held.release()
        swarm.sandbox.state.knobs.rendezvous = None
        done = await worker
        assert done.status == "succeeded" and done.posted, done.reason


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


async def test_a_re_review_interrupted_after_resolving_a_thread_gets_its_summary_saying_so(
    sandbox: SandboxServer,
    store_url: str | None,
    make_swarm: Callable[..., Swarm],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The demo's walk-through: a push fixes a finding, the re-review resolves its thread and is
    interrupted before the summary's edit. The next run edits the one summary, which names the
    thread resolved by that push, and replies in it no second time."""
    give_contents_write(sandbox.state)
    monkeypatch.setenv("SWARM_RESOLVE_THREADS", "true")
    async with swarm_in(store_url, make_swarm, monkeypatch) as swarm:
        await _resolved_then_interrupted_then_finished(swarm)


async def _resolved_then_interrupted_then_finished(swarm: Swarm) -> None:
    first = head(swarm)
    assert (await next_run(swarm)).posted
    [summary] = summaries(swarm)
    new_head = push_without_the_print(swarm)
    rereview = swarm.pull_task(WIDGETS, PR, since_sha=first)
    await interrupted_at_the_summary(swarm, rereview, ("PATCH", SUMMARY_EDIT))
    printed = next(c for c in bot_threads(swarm) if "print(" in c.body)
    assert printed.resolved_by == REVIEWER_BOT and len(replies(swarm, printed)) == 1
    assert "Resolved by this push" not in summary.body

    finished = await next_run(swarm)

    assert finished.status == "succeeded" and finished.llm_calls == 0, finished.reason
    assert finished.finished_summary and f"#issuecomment-{summary.id}" in finished.finished_summary
    assert [c.id for c in summaries(swarm)] == [summary.id]
    assert "Resolved by this push (1)" in summary.body and "**Minor** (2)" in summary.body
    assert f"`{new_head[:12]}`" in summary.body
    assert len(replies(swarm, printed)) == 1 and len(bot_reviews(swarm, WIDGETS, PR)) == 2


async def test_a_dry_run_leaves_the_summary_of_an_interrupted_review_without_a_model_call(
    store_url: str | None, make_swarm: Callable[..., Swarm], monkeypatch: pytest.MonkeyPatch
) -> None:
    async with swarm_in(store_url, make_swarm, monkeypatch) as swarm:
        await interrupted_at_the_summary(swarm)
        async with make_swarm(dry_run=True) as dry:
            task = dry.pull_task(WIDGETS, PR, finishing=True)
            outcome = await dry.run(await dry.dispatch(task))
        assert outcome.status == "skipped" and outcome.llm_calls == 0, outcome.reason
        assert summaries(swarm) == []
        assert_finished_once(swarm, await next_run(swarm))


async def test_a_run_arriving_while_a_live_worker_writes_its_summary_leaves_it_to_that_worker(
    swarm_on: Swarm,
) -> None:
    """A webhook's review posted and its summary in flight when a `swarm run` reviews the same
    PR: its worker is alive, so the review is not "left by an interrupted run" and the run does
    not finish it; one summary, the reviewer's. (A gone reviewer's review is finished by the next
    run: the tests above.)"""
    swarm = swarm_on

    async def second_run() -> WorkerOutcome:
        assert len(bot_reviews(swarm, WIDGETS, PR)) == 1 and summaries(swarm) == []
        swarm.run_id = swarm.runtime.store.create_run("test")
        task = swarm.pull_task(WIDGETS, PR, finishing=True)  # as discovery plans it now
        return await swarm.run(await swarm.dispatch(task))

    meanwhile = await while_at_the_summary(swarm, second_run)

    assert meanwhile.status == "skipped" and meanwhile.llm_calls == 0, meanwhile.reason
    assert "already reviewed" in (meanwhile.reason or "") and not meanwhile.finished_summary
    assert len(summaries(swarm)) == 1 and len(bot_reviews(swarm, WIDGETS, PR)) == 1
    key = review_key(WIDGETS, PR, head(swarm), "reviewer")
    known = swarm.runtime.store.get_review_key(key)
    assert known is not None and known.unfinished is None
