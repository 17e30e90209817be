"""``swarm run`` as a person runs it, ended by a mistake or by Ctrl-C: one line and the right
exit status for the mistake, a summary of what was done and left for Ctrl-C, and never a run or
a worker left "running" in the store."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from agents.store import Store
from agents.store.runs import LEFT_AFTER_WRITE
from sandbox.github.model import IssueComment
from sandbox.github.records import Rendezvous
from sandbox.github.seed import REPOS, REVIEWER_BOT
from tests.run.real_server.conftest import SWARM, ObservedSwarm

pytestmark = [pytest.mark.prefect, pytest.mark.slow]
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
SUMMARY_ROUTE = "/repos/{owner}/{repo}/issues/{issue_number}/comments"


def _store_rows(swarm: ObservedSwarm) -> tuple[list[str], list[str]]:
    with Store.open(None, swarm.root / "data") as store:
        runs = store.list_runs(limit=20)
        workers = [w.status for r in runs for w in store.list_workers(run_id=r.id)]
        return [r.status for r in runs], workers


def test_an_unknown_pr_is_one_error_line_and_exit_2(swarm: ObservedSwarm) -> None:
    run = swarm.run("--pr", "acme/widgets#999")
    assert run.returncode == EXIT_USAGE, run.output
    assert run.output.strip().splitlines() == [
        "error: --pr acme/widgets#999: acme/widgets has no open pull request #999"
    ], run.output
    assert "Traceback" not in run.output
    runs, workers = _store_rows(swarm)
    assert runs == ["failed"] and workers == []
    # Wide enough that the note is on one line (at xdist's COLUMNS=80 it wraps, by design).
    shown = swarm.command("runs")
    assert "not open: acme/widgets#999" in shown.stdout, shown.stdout


def test_a_repository_the_app_cannot_reach_is_one_error_line_and_exit_2(
    swarm: ObservedSwarm,
) -> None:
    run = swarm.run("--repo", "acme/nope", "--dry-run")
    assert run.returncode == EXIT_USAGE, run.output
    lines = [line for line in run.output.splitlines() if line.strip()]
    assert len(lines) == 1, run.output  # not the flow engine's line as well
    assert lines[0].startswith("error: GitHub refused a token for acme/nope"), run.output
    assert "Traceback" not in run.output
    runs, workers = _store_rows(swarm)
    assert runs == ["failed"] and workers == []


def test_one_wrong_repository_in_swarm_repos_is_named_alone(swarm: ObservedSwarm) -> None:
    run = swarm.run("--dry-run", SWARM_REPOS=f"{REPOS[0]},acme/nope,{REPOS[1]}")
    assert run.returncode == EXIT_USAGE, run.output
    [line] = [line for line in run.output.splitlines() if line.strip()]
    assert line.startswith("error: GitHub refused a token for acme/nope to identity "), line
    assert REPOS[0] not in line and REPOS[1] not in line, line


def test_ctrl_c_says_what_was_done_and_left_and_leaves_nothing_running(
    swarm: ObservedSwarm,
) -> None:
    swarm.sandbox.state.knobs.latency_s = 0.25  # workers take seconds: Ctrl-C meets them at work
    args = [SWARM, "run", "--max-workers", "1", *[a for r in REPOS for a in ("--repo", r)]]
    process = subprocess.Popen(
        args,
        env=swarm.env(),
        cwd=swarm.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 240
        while "succeeded" not in _store_rows(swarm)[1]:
            assert process.poll() is None, process.communicate()[0]
            assert time.monotonic() < deadline, "no worker finished"
            time.sleep(0.2)
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in the terminal sends
        output, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == EXIT_INTERRUPTED, output
    assert "interrupted: run run-" in output and " is cancelled; " in output, output
    assert "  done: acme/" in output and "  left for the next run: " in output, output
    assert "Traceback" not in output and "Crash detected" not in output, output
    runs, workers = _store_rows(swarm)
    assert runs == ["cancelled"], runs
    assert "running" not in workers and "pending" not in workers, workers


def _posted_while_running(swarm: ObservedSwarm) -> list[str]:
    """Workers still running whose review the store already holds as posted."""
    with Store.open(None, swarm.root / "data") as store:
        running = [
            w.id
            for r in store.list_runs(limit=5)
            for w in store.list_workers(run_id=r.id)
            if w.status == "running"
        ]
        return list(store.posted_by(running))


def test_ctrl_c_after_a_review_was_posted_records_it_and_the_next_run_writes_its_summary_once(
    swarm: ObservedSwarm,
) -> None:
    """Interrupted between a worker's review and its summary (the summary's request held in
    flight, deterministically, and never carried out): the review is on GitHub, so the store
    records the worker succeeded and the interrupted report lists it as done, with its link
    and the summary left for the next run; the next ``swarm run`` writes that summary once,
    with no model call, and says so; the one after writes nothing more."""
    held = Rendezvous("POST", SUMMARY_ROUTE, parties=2, timeout_s=300, refuse=503)
    swarm.sandbox.state.knobs.rendezvous = held
    args = [SWARM, "run", "--max-workers", "1", "--repo", REPOS[0]]
    process = subprocess.Popen(
        args,
        env=swarm.env(),
        cwd=swarm.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 240
        while not held.arrived or not (caught := _posted_while_running(swarm)):
            assert process.poll() is None, process.communicate()[0]
            assert time.monotonic() < deadline, "no summary was on its way"
            time.sleep(0.05)
        os.killpg(process.pid, signal.SIGINT)
        output, _ = process.communicate(timeout=120)
    finally:
        held.release()  # the held summary is refused: the interrupted run never wrote it
        swarm.sandbox.state.knobs.rendezvous = None
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == EXIT_INTERRUPTED, output
    with Store.open(None, swarm.root / "data") as store:
        [worker_id] = caught
        worker = store.get_worker(worker_id)
        [url] = store.posted_by([worker_id])[worker_id]
    assert worker.status == "succeeded", worker.blocked_reason
    assert worker.blocked_reason and "its write was posted" in worker.blocked_reason
    [line] = [ln for ln in output.splitlines() if url in ln]
    assert line.startswith("  done: acme/widgets#"), output
    assert line.endswith(f"; {LEFT_AFTER_WRITE}"), output
    left = [ln for ln in output.splitlines() if ln.startswith("  left for the next run: ")]
    label = line.split()[1]
    assert all(label not in ln for ln in left), output
    number = int(label.split("#")[1].split("@")[0])
    assert _summaries(swarm, number) == []

    again = swarm.run("--max-workers", "1", "--repo", REPOS[0])

    assert again.returncode == 0, again.output
    [summary] = _summaries(swarm, number)
    told = f"summary of {label} (left by an interrupted run): "
    [said] = [ln for ln in again.output.splitlines() if ln.startswith(told)]
    assert said.endswith(f"#issuecomment-{summary.id}"), again.output
    # The headline counts it: the worker that wrote it is in the table as succeeded.
    assert "1 summary(ies) left by an interrupted run written" in again.output, again.output
    writes = _writes(swarm)
    third = swarm.run("--max-workers", "1", "--repo", REPOS[0])
    assert third.returncode == 0, third.output
    assert _writes(swarm) == writes and len(_summaries(swarm, number)) == 1, third.output


def _summaries(swarm: ObservedSwarm, number: int) -> list[IssueComment]:
    """The reviewer bot's comments in the conversation of ``acme/widgets#number``."""
    issue = swarm.sandbox.state.pull(REPOS[0], number)
    return [c for c in issue.comments if c.user_login == REVIEWER_BOT]


def _writes(swarm: ObservedSwarm) -> int:
    return sum(
        1 for r in swarm.sandbox.state.requests if r.is_write and r.route.startswith("/repos")
    )
