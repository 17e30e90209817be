"""Every run ends in the store, whatever ends it: a repository the App cannot read, a pull request
named that is not open, a cancelled flow run. ``swarm runs`` used to keep four such rows
"running" after an hour; a person then cannot tell a dead run from a live one."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agents.store import NewWorker, Store
from flows.run.adapters import abandon_store_run
from sandbox.github.seed import WIDGETS, WIDGETS_PR_CLEAN
from tests.json_access import text as as_text
from tests.run.conftest import Swarm, run_swarm

pytestmark = pytest.mark.prefect


def _runs(swarm: Swarm) -> list[Any]:
    with Store.open(None, swarm.data_dir) as store:
        return list(store.list_runs(limit=10))


def test_a_repository_the_app_cannot_reach_ends_the_run_failed_with_the_reason(
    swarm: Swarm,
) -> None:
    state, result = run_swarm(repos=["acme/not-installed"])
    assert state.is_failed()
    assert isinstance(result, BaseException)
    [run] = _runs(swarm)
    assert run.status == "failed"
    assert "acme/not-installed" in run.totals["error"]


def test_a_pull_request_named_that_is_not_open_is_reported_and_fails_the_run(
    swarm: Swarm,
) -> None:
    state, report = run_swarm(targets=[f"{WIDGETS}#999", f"{WIDGETS}#{WIDGETS_PR_CLEAN}"])
    assert report.not_open == [f"{WIDGETS}#999"]
    assert not report.ok and state.is_failed()
    assert "1 named target(s) not open" in report.headline()
    # The PR that is open was still reviewed.
    assert len(swarm.bot_reviews(WIDGETS, WIDGETS_PR_CLEAN)) == 1
    [run] = _runs(swarm)
    assert run.status != "running"


def test_an_interrupted_run_ends_cancelled_with_the_workers_it_left(swarm: Swarm) -> None:
    with Store.open(None, swarm.data_dir) as store:
        run_id = store.create_run("flow")
        running = store.create_worker(NewWorker(run_id, role_chain=["reviewer"], status="running"))
        finished = store.create_worker(NewWorker(run_id, role_chain=["reviewer"], status="running"))
        store.finish_worker(finished, "succeeded", budgets_used={})
        abandon_store_run(store, run_id, asyncio.CancelledError())
        assert store.get_run(run_id).status == "cancelled"
        assert store.get_worker(running).status == "failed"
        assert "interrupted" in str(store.get_worker(running).blocked_reason)
        assert store.get_worker(finished).status == "succeeded"
        assert "interrupted" in as_text(store.get_run(run_id).totals["error"])
