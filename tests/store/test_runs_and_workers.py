"""Runs and workers: lifecycle, validation messages and crash recovery of stale workers."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta

import pytest

from agents.redact import fingerprint
from agents.store import (
    NewWorker,
    Store,
    StoreError,
    UnknownRunError,
    UnknownWorkerError,
    WorkerUpdate,
)
from agents.store.base import utcnow
from agents.store.runs import LEFT_AFTER_WRITE


def test_run_lifecycle_is_listed_newest_first(store: Store) -> None:
    first = store.create_run("schedule", prefect_flow_run_id="fr-1")
    second = store.create_run("manual", run_id="run-custom")
    store.finish_run(first, "succeeded", totals={"workers": 2, "cost": 0.5})
    runs = store.list_runs()
    assert [r.id for r in runs] == [second, first]
    done = store.get_run(first)
    assert done.status == "succeeded" and done.finished_at is not None
    assert done.totals == {"workers": 2, "cost": 0.5}
    assert done.prefect_flow_run_id == "fr-1"
    assert store.list_runs(status="running")[0].id == "run-custom"


def test_worker_records_identity_envelope_and_fingerprint_never_the_token(store: Store) -> None:
    run_id = store.create_run("manual")
    token = "ghs_" + "a" * 36
    worker_id = store.create_worker(
        NewWorker(
            run_id,
            role_chain=["base", "reviewer"],
            task={"repo": "octo/demo", "pr": 3, "note": f"uses {token}"},
            identity_login="swarm-bot[bot]",
            envelope_id="env-1",
            envelope_hash="sha256:abcd",
            token_fingerprint=fingerprint(token),
        )
    )
    w = store.get_worker(worker_id)
    assert w.role_chain == ["base", "reviewer"]
    assert w.token_fingerprint == fingerprint(token)
    assert w.task["note"] == "uses [REDACTED:github-token]"
    assert w.status == "pending" and w.pid == os.getpid()
    store.update_worker(worker_id, WorkerUpdate(status="running", budgets_used={"tokens": 10}))
    store.finish_worker(worker_id, "blocked", blocked_reason="BLOCKED: identity mismatch")
    w = store.get_worker(worker_id)
    assert (w.status, w.blocked_reason) == ("blocked", "BLOCKED: identity mismatch")
    assert w.budgets_used == {"tokens": 10} and w.finished_at is not None
    assert [x.id for x in store.list_workers(run_id)] == [worker_id]


def test_bad_status_and_ids_are_refused_with_clear_messages(store: Store, worker: str) -> None:
    with pytest.raises(StoreError) as err:
        store.update_worker(worker, WorkerUpdate(status="done"))
    assert str(err.value) == (
        "worker status 'done' is not one of: pending, running, succeeded, skipped, blocked, "
        "budget_exhausted, paused, failed"
    )
    with pytest.raises(StoreError) as err:
        store.finish_worker(worker, "running")
    assert str(err.value) == "finish_worker needs a final status, not 'running'"
    with pytest.raises(StoreError) as err:
        store.create_run("x", run_id="has space")
    assert str(err.value) == (
        "run id 'has space' is not a valid id: use 1-64 characters from A-Z a-z 0-9 _ . : -"
    )
    with pytest.raises(UnknownRunError, match="no run with id 'nope'"):
        store.create_worker(NewWorker("nope", role_chain=["reviewer"]))
    with pytest.raises(UnknownWorkerError, match="no worker with id 'nope'"):
        store.finish_worker("nope", "failed")


def test_worker_with_old_heartbeat_is_marked_failed_with_a_status_event(store: Store) -> None:
    run_id = store.create_run("manual")
    stale = store.create_worker(NewWorker(run_id, role_chain=["reviewer"], status="running"))
    fresh = store.create_worker(NewWorker(run_id, role_chain=["reviewer"], status="running"))
    store.append_event(stale, "user_turn", "begin")
    later = utcnow() + timedelta(minutes=10)
    store.heartbeat(fresh)
    failed = store.mark_stale_workers_failed(timedelta(minutes=5), now=later)
    assert stale in failed and fresh in failed  # both heartbeats are 10 minutes old by then
    assert store.mark_stale_workers_failed(timedelta(minutes=5), now=utcnow()) == []
    w = store.get_worker(stale)
    assert w.status == "failed" and (w.blocked_reason or "").startswith("stale: no heartbeat")
    events = store.get_transcript(stale)
    assert [e.kind for e in events] == ["user_turn", "status"]
    assert events[-1].content["status"] == "failed"


def test_worker_whose_process_is_gone_is_marked_failed_at_once(store: Store) -> None:
    run_id = store.create_run("manual")
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    dead = store.create_worker(
        NewWorker(run_id, role_chain=["reviewer"], status="running", pid=child.pid)
    )
    alive = store.create_worker(NewWorker(run_id, role_chain=["reviewer"], status="running"))
    assert store.mark_stale_workers_failed(timedelta(hours=1)) == [dead]
    assert store.get_worker(dead).blocked_reason == (
        f"stale: process {child.pid} on {store.get_worker(dead).host} is gone"
    )
    assert store.get_worker(alive).status == "running"


def test_a_run_whose_machine_died_is_failed_with_its_unfinished_workers_from_anywhere(
    store: Store,
) -> None:
    run_id = store.create_run("flow", prefect_flow_run_id="fr-dead")
    # On another machine, heartbeat fresh: neither the pid check nor the timeout catches it.
    held = store.create_worker(
        NewWorker(run_id, role_chain=["reviewer"], status="running", host="gone.example", pid=4242)
    )
    queued = store.create_worker(NewWorker(run_id, role_chain=["reviewer"], host="gone.example"))
    done = store.create_worker(NewWorker(run_id, role_chain=["reviewer"], status="running"))
    store.finish_worker(done, "succeeded")
    assert store.mark_stale_workers_failed(timedelta(hours=1)) == []

    reason = "stale: its flow run fr-dead ended Crashed without finishing"
    assert sorted(store.abandon_run(run_id, reason)) == sorted([held, queued])

    assert store.get_run(run_id).status == "failed"
    for worker_id in (held, queued):
        worker = store.get_worker(worker_id)
        assert worker.status == "failed" and worker.blocked_reason == reason
        assert store.get_transcript(worker_id)[-1].content == {"status": "failed", "reason": reason}
    assert store.get_worker(done).status == "succeeded"
    # A second look changes nothing, and a finished run keeps its status.
    assert store.abandon_run(run_id, reason) == []
    finished = store.create_run("flow")
    store.finish_run(finished, "succeeded")
    store.abandon_run(finished, reason)
    assert store.get_run(finished).status == "succeeded"


def test_an_interrupted_worker_whose_write_was_posted_ends_succeeded_not_failed(
    store: Store,
) -> None:
    """Ctrl-C after a worker's review was posted: the store says the review is there (the
    worker succeeded, interrupted after), and only the worker that posted nothing failed."""
    run_id = store.create_run("flow")
    posted = store.create_worker(NewWorker(run_id, role_chain=["reviewer"], status="running"))
    store.claim_review_key("acme/widgets#1@abc/reviewer", posted)
    store.mark_review_posted("acme/widgets#1@abc/reviewer", 7, "https://example.test/r/7")
    claimed = store.create_worker(NewWorker(run_id, role_chain=["reviewer"], status="running"))
    store.claim_review_key("acme/widgets#2@def/reviewer", claimed)

    reason = "interrupted before it ended (Ctrl-C, or the flow run was cancelled)"
    store.abandon_run(run_id, reason, status="cancelled")

    ended = store.get_worker(posted)
    assert ended.status == "succeeded"
    assert ended.blocked_reason == f"its write was posted, then it was {reason}"
    assert store.get_worker(claimed).status == "failed"
    assert store.posted_by([posted, claimed]) == {posted: ["https://example.test/r/7"]}


def test_a_write_with_work_left_after_it_is_kept_until_finished_and_told_when_interrupted(
    store: Store,
) -> None:
    """The rest of a review's work (its summary) is kept on its key from before the review is
    posted: an interrupt after the review says the summary is left for the next run, which
    reads the record, and once finished nothing is left."""
    run_id = store.create_run("flow")
    worker = store.create_worker(NewWorker(run_id, role_chain=["reviewer"], status="running"))
    other = store.create_worker(NewWorker(run_id, role_chain=["reviewer"], status="running"))
    key = "acme/widgets#1@abc:reviewer"
    rest = {"what_changed": "Adds a flag.", "findings": [], "fixed": [12]}
    assert not store.note_unfinished(key, worker, rest)  # no claim of this worker's: kept nowhere
    store.claim_review_key(key, worker)
    assert not store.note_unfinished(key, other, rest)  # another worker's claim is not touched
    assert store.note_unfinished(key, worker, rest)
    store.mark_review_posted(key, 7, "https://example.test/r/7")

    reason = "interrupted before it ended (Ctrl-C, or the flow run was cancelled)"
    store.abandon_run(run_id, reason, status="cancelled")

    ended = store.get_worker(worker)
    assert ended.status == "succeeded"
    assert ended.blocked_reason == (
        f"its write was posted, then it was {reason}; {LEFT_AFTER_WRITE}"
    )
    assert store.posted_writers([worker, other]) == {worker: True}
    known = store.get_review_key(key)
    assert known is not None and known.state == "posted" and known.unfinished == rest
    store.mark_finished(key)
    finished = store.get_review_key(key)
    assert finished is not None and finished.unfinished is None
    assert store.posted_writers([worker]) == {worker: False}


def test_an_id_that_looks_like_a_credential_is_refused(store: Store) -> None:
    with pytest.raises(StoreError) as err:
        store.create_run("manual", run_id="ghp_abcdef0123")
    assert str(err.value) == "run id looks like a credential; ids must not carry secrets"


def test_runs_are_found_by_the_start_of_their_id_and_underscore_is_no_wildcard(
    store: Store,
) -> None:
    store.create_run("manual", run_id="run-ab_1")
    store.create_run("manual", run_id="run-abx1")
    store.create_run("manual", run_id="run-cd")
    assert [r.id for r in store.runs_starting("run-ab_")] == ["run-ab_1"]
    assert sorted(r.id for r in store.runs_starting("run-ab", limit=5)) == ["run-ab_1", "run-abx1"]
    assert [r.id for r in store.runs_starting("run-ab", limit=1)] in (["run-ab_1"], ["run-abx1"])
    assert store.runs_starting("run-zz") == []
