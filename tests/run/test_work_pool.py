"""The shipped ``prefect.yaml`` on a real process work pool, as an operator runs it.

A Prefect server on PostgreSQL (its own database), the ``swarm-process`` pool, ``prefect deploy
--all`` from the repository with the file unmodified, the shipped dead-run automations, and two
``prefect worker`` processes, each started in a directory of its own (the checkout's path must
not matter). One pool serves the module (:mod:`tests.run.pool`); each test has repositories of
its own.

- One run over six repositories fans out into one child run per repository; both workers
  execute children, every PR gets exactly one review, GitHub never answers with a rate limit,
  and the parent's report counts every child's work.
- A schedule tick that finds a run going ends ``Skipped``; a run a person starts meanwhile runs.
- A machine killed (worker and flow-run processes, no goodbye) in the middle of a child run:
  the child ends Crashed, the parent ends, no store row is left running, and the next run
  reviews the PRs the machine held, each exactly once.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agents.store.records import RunRecord, WorkerRecord
from agents.store.store import Store
from tests.browser import Browser
from tests.run.pool import (
    RUN_TIMEOUT_S,
    WorkPool,
    add_repos,
    flow_run_of,
    prefect,
    work_pool,
)

POOL_REPOS = [f"acme/pool-{n}" for n in range(1, 7)]
PRS_PER_REPO = 5

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.timeout(3 * RUN_TIMEOUT_S)]


@pytest.fixture(scope="module")
def pool(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkPool]:
    with work_pool(pg_url, tmp_path_factory.mktemp("pool"), POOL_REPOS, PRS_PER_REPO) as found:
        yield found


@pytest.fixture
def machines(pool: WorkPool) -> WorkPool:
    """Both machines up (a test before may have killed one), GitHub answering at full speed."""
    for name, machine in list(pool.machines.items()):
        if not machine.alive():
            pool.start_machine(name)
    pool.sandbox.state.knobs.latency_s = 0.0
    pool.sandbox.state.knobs.hold = None
    return pool


def store_of(pool: WorkPool) -> Store:
    return Store.open(pool.store_url, pool.root / "data")


def runs_of(store: Store, flow_run_ids: set[str]) -> list[RunRecord]:
    return [r for r in store.list_runs(limit=500) if r.prefect_flow_run_id in flow_run_ids]


@pytest.fixture(scope="module")
def fanned_out(pool: WorkPool) -> dict[str, Any]:
    """The run over the six pool repositories, started as an operator does (the CLI), ended."""
    started = prefect(pool.env, "deployment", "run", "swarm-run/review-open-prs")
    found = re.search(r"UUID:\s*([0-9a-f-]{36})", started)
    assert found, started
    return pool.wait_for(found.group(1))


def test_one_run_over_six_repositories_spreads_over_two_pool_workers(
    pool: WorkPool, fanned_out: dict[str, Any]
) -> None:
    parent = fanned_out
    children = pool.children(parent["id"])

    # Subflows of the parent in the UI's tree, one per repository, named after it.
    assert sorted(c["name"] for c in children) == [f"swarm reviewer over {r}" for r in POOL_REPOS]
    assert {c["state_type"] for c in children} == {"COMPLETED"}
    assert parent["state_type"] == "COMPLETED", parent.get("state")
    assert parent["name"] == "swarm reviewer over acme/pool-1, acme/pool-2, acme/pool-3 and 3 more"

    with store_of(pool) as store:
        parent_run = store.run_for_flow_run(parent["id"])
        child_runs = runs_of(store, {c["id"] for c in children})
    assert parent_run is not None and parent_run.trigger == "flow-parent"
    assert len(child_runs) == len(POOL_REPOS)
    assert {r.trigger for r in child_runs} == {"flow"}
    # Both machines ran some of the children (a worker that lost the race for a run logs
    # "Aborted submission", not this line).
    for machine in pool.machines.values():
        text = machine.log.read_text(errors="replace")
        assert re.findall(r"Flow run 'swarm reviewer over (acme/pool-\d)' submitted", text), text[
            -3000:
        ]
    # The parent's report counts every child's reviews.
    assert parent_run.totals["new_reviews"] == len(POOL_REPOS) * PRS_PER_REPO
    assert parent_run.totals["failed"] == 0

    for repo in POOL_REPOS:
        for number in range(1, PRS_PER_REPO + 1):
            assert pool.bot_reviews(repo, number) == 1, f"{repo}#{number}"
    for login, counters in pool.sandbox.state.counters.items():
        assert counters.primary_limited == 0 and counters.secondary_limited == 0, login


def test_the_parent_run_page_shows_its_child_runs_by_repository(
    pool: WorkPool, fanned_out: dict[str, Any], browser: Browser, screenshots: Path
) -> None:
    """What a person sees of the fan-out in the Prefect UI: the children under the parent,
    named after their repositories and tagged as children."""
    page = browser.page(f"{pool.server.url}/runs/flow-run/{fanned_out['id']}")
    page.wait_for_text([fanned_out["name"], "Completed"])
    page.click_text("Subflow Runs")
    page.wait_for_text([f"swarm reviewer over {r}" for r in POOL_REPOS] + ["swarm-child"])
    time.sleep(2)  # the run graph (a canvas) draws the child runs after the text is there
    page.screenshot(screenshots / "fan-out.png")


def test_a_schedule_tick_finding_a_run_going_is_skipped_while_a_persons_run_starts(
    machines: WorkPool,
) -> None:
    pool = machines
    add_repos(pool.sandbox.state, ["acme/overlap-a", "acme/overlap-b"], 1)
    # GitHub holds every request, so the first run stays in the middle of its work.
    hold = threading.Event()
    pool.sandbox.state.knobs.hold = hold
    try:
        going = pool.trigger(repos=["acme/overlap-a"])
        pool.wait_for(going, {"RUNNING"})
        tick = pool.schedule_tick()
        person = pool.trigger(repos=["acme/overlap-b"])
        skipped = pool.wait_for(tick)
        # The person's run started although the first one is still going.
        pool.wait_for(person, {"RUNNING", "COMPLETED", "FAILED"})
        assert pool.flow_run(going)["state_type"] == "RUNNING"
    finally:
        hold.set()
    done = pool.wait_for(person)
    first = pool.wait_for(going)

    assert skipped["state_type"] == "COMPLETED"
    assert skipped["state"]["name"] == "Skipped", skipped["state"]
    assert skipped["auto_scheduled"]
    assert done["state_type"] == "COMPLETED" and done["state"]["name"] == "Completed"
    assert first["state_type"] == "COMPLETED"
    assert pool.bot_reviews("acme/overlap-a", 1) == 1
    assert pool.bot_reviews("acme/overlap-b", 1) == 1
    with store_of(pool) as store:
        # The skipped tick did no work: no store run, no review.
        assert store.run_for_flow_run(tick) is None
        assert store.run_for_flow_run(person) is not None


def _victim(pool: WorkPool, parent_id: str, store: Store) -> tuple[str, list[WorkerRecord]]:
    """A machine running a child (not the parent) with a worker in the middle of a review,
    once every child has started: no child is caught between claim and start."""
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while time.monotonic() < deadline:
        children = pool.children(parent_id)
        if children and all(c["state_type"] == "RUNNING" for c in children):
            child_ids = {c["id"] for c in children}
            running = [
                w
                for run in runs_of(store, child_ids)
                for w in store.list_workers(run.id, status="running")
            ]
            for name, machine in pool.machines.items():
                below = machine.flow_processes()
                if parent_id in {flow_run_of(pid) for pid in below}:
                    continue
                held = [w for w in running if w.pid in below]
                if held:
                    return name, held
        time.sleep(0.2)
    raise AssertionError("no child run was caught with a worker running")


def test_pull_requests_a_killed_machine_held_are_reviewed_once_by_the_next_run(
    machines: WorkPool,
) -> None:
    pool = machines
    repos = ["acme/kill-1", "acme/kill-2"]
    prs = 4
    add_repos(pool.sandbox.state, repos, prs)
    # Slow GitHub down so a child is still reviewing when its machine goes.
    pool.sandbox.state.knobs.latency_s = 0.5
    parent_id = pool.trigger(repos=repos)
    with store_of(pool) as store:
        name, held = _victim(pool, parent_id, store)
        pool.kill(pool.machines[name])
    pool.sandbox.state.knobs.latency_s = 0.0
    held_prs = {(w.task["repo"], w.task["number"]) for w in held}
    assert held_prs

    # The dead child is marked Crashed (no heartbeat: the shipped automation), so the parent
    # ends instead of waiting forever, and reports the repository as unreadable.
    first = pool.wait_for(parent_id)
    assert first["state_type"] == "FAILED", first["state"]
    crashed = [c for c in pool.children(parent_id) if c["state_type"] == "CRASHED"]
    assert crashed
    with store_of(pool) as store:
        dead_runs = runs_of(store, {c["id"] for c in crashed})
        # The parent failed the dead child's store run and its workers at once.
        assert dead_runs and {r.status for r in dead_runs} == {"failed"}
        for run in dead_runs:
            for worker in store.list_workers(run.id):
                assert worker.status != "running", worker
        for worker in held:
            assert (store.get_worker(worker.id).blocked_reason or "").startswith("stale:")

    # The machine comes back; the next run reviews what the dead one held, nothing twice.
    pool.start_machine(name)
    second = pool.wait_for(pool.trigger(repos=repos))
    assert second["state_type"] == "COMPLETED", second["state"]
    for repo in repos:
        for number in range(1, prs + 1):
            assert pool.bot_reviews(repo, number) == 1, f"{repo}#{number}"
    with store_of(pool) as store:
        assert store.list_workers(status="running") == []
        assert store.list_runs(status="running", limit=500) == []
    for login, counters in pool.sandbox.state.counters.items():
        assert counters.primary_limited == 0 and counters.secondary_limited == 0, login
