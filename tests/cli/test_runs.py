"""``swarm runs`` shows each worker's end in the outcome's own words."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agents.outcome import OUTCOME_STATUSES
from agents.store import NewWorker, Store
from tests.cli.conftest import EXIT_USAGE, assert_error, swarm


def test_runs_shows_paused_and_skipped_workers_as_themselves() -> None:
    with Store.open(None, Path(os.environ["SWARM_DATA_DIR"])) as store:
        run_id = store.create_run("manual")
        for status in OUTCOME_STATUSES:
            worker = store.create_worker(
                NewWorker(
                    run_id, worker_id=f"w-{status}", role_chain=["reviewer"], status="running"
                )
            )
            store.finish_worker(worker, status, blocked_reason=f"why {status}")
        store.finish_run(run_id, "partial", {"workers": len(OUTCOME_STATUSES)})
    seen = swarm("runs", run_id)
    assert seen.code == 0, seen.output
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in seen.lines if "│" in line]
    shown = {row[0]: (row[4], row[5]) for row in cells if row[0].startswith("w-")}
    assert shown == {f"w-{status}": (status, f"why {status}") for status in OUTCOME_STATUSES}


def _rows_naming(lines: list[str], text: str) -> list[dict[str, str]]:
    """The rows of the table naming ``text``, each by its header's column names."""
    header = next(line for line in lines if "┃" in line and " run " in line)
    names = [c.strip() for c in header.split("┃")[1:-1]]
    return [
        dict(zip(names, [c.strip() for c in line.split("│")[1:-1]], strict=True))
        for line in lines
        if text in line and "│" in line
    ]


def test_a_dry_run_is_shown_as_dry_and_counts_nothing_as_new() -> None:
    with Store.open(None, Path(os.environ["SWARM_DATA_DIR"])) as store:
        run_id = store.create_run("flow")
        totals = {"workers": 3, "new_reviews": 3, "already_reviewed": 0, "failed": 0}
        store.finish_run(run_id, "succeeded", {**totals, "dry_run": True})
    seen = swarm("runs")
    assert seen.code == 0, seen.output
    [row] = _rows_naming(seen.lines, run_id)
    assert row["status"] == "succeeded (dry run)"
    assert row["new"] == "0" and row["note"] == "3 would be posted", row


def test_a_run_ended_by_an_error_says_why_and_is_not_running() -> None:
    with Store.open(None, Path(os.environ["SWARM_DATA_DIR"])) as store:
        run_id = store.create_run("flow")
        store.create_worker(
            NewWorker(run_id, worker_id="w-left", role_chain=["reviewer"], status="running")
        )
        store.abandon_run(run_id, "the run failed: TokenRefused: not installed on acme/nope")
    seen = swarm("runs")
    [row] = _rows_naming(seen.lines, run_id)
    assert row["status"] == "failed" and row["note"].startswith("the run failed: TokenRefused"), row
    assert "w-left" in seen.output and "running" not in seen.output


def test_runs_outside_the_project_root_refuses_and_makes_no_store(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("SWARM_DATA_DIR")  # the default: .swarm/ in the working directory
    for command in (
        ["runs"],
        ["limits"],
        ["audit", "--identity", "swarm[bot]"],
        ["memory", "list"],
    ):
        seen = swarm(*command)
        assert seen.code == EXIT_USAGE, seen.output
        assert seen.lines == [
            f"error: no swarm store in {tmp_path / '.swarm'}: run swarm from the project's root "
            "(where `swarm demo` or `swarm run` made it), or set SWARM_DATA_DIR"
        ], seen.output
        assert not (tmp_path / ".swarm").exists()


def test_runs_audit_and_limits_print_json_for_scripts() -> None:
    import json

    with Store.open(None, Path(os.environ["SWARM_DATA_DIR"])) as store:
        run_id = store.create_run("manual")
        worker = store.create_worker(
            NewWorker(
                run_id,
                worker_id="w-json",
                role_chain=["reviewer"],
                identity_login="swarm-reviewer[bot]",
                status="running",
            )
        )
        store.finish_worker(worker, "succeeded")
        store.finish_run(run_id, "succeeded", {"workers": 1, "new_reviews": 1})
    seen = swarm("runs", "--json")
    assert seen.code == 0, seen.output
    runs, workers, left = (json.loads(line) for line in seen.lines)
    assert runs["rows"][0]["run"] == run_id and runs["rows"][0]["workers"] == 1
    assert workers["rows"][0]["worker"] == "w-json"
    assert left == {"title": f"skipped or left by {run_id}", "rows": []}
    one = [json.loads(line) for line in swarm("runs", run_id, "--json").lines]
    assert [t["title"] for t in one] == [
        "swarm runs",
        f"workers of {run_id}",
        f"skipped or left by {run_id}",
    ]
    assert [r["run"] for r in one[0]["rows"]] == [run_id]
    [audit] = [
        json.loads(line)
        for line in swarm("audit", "--identity", "swarm-reviewer[bot]", "--json").lines
    ]
    assert audit["rows"] == []
    [limits] = [json.loads(line) for line in swarm("limits", "--json").lines]
    assert limits["rows"] == []
    assert "│" in swarm("runs").output  # the next command without --json: a table again


def test_runs_name_each_runs_role_repositories_and_cost() -> None:
    with Store.open(None, Path(os.environ["SWARM_DATA_DIR"])) as store:
        run_id = store.create_run("flow")
        report = {"role": "implementer", "repos": ["acme/widgets", "acme/gadgets"]}
        totals = {"workers": 1, "new_reviews": 1, "cost_usd": 0.0282, "report": report}
        store.finish_run(run_id, "succeeded", totals)
    seen = swarm("runs")
    [row] = _rows_naming(seen.lines, run_id)
    assert (row["role"], row["repos"], row["cost"]) == (
        "implementer",
        "acme/widgets, acme/gadgets",
        "$0.0282",
    ), row


def test_an_interrupted_runs_shards_of_one_pr_are_each_named_apart() -> None:
    """Ctrl-C during a sharded review: the workers left are two shards and the summarizer of
    one PR, each named by its part, not three lines (or one, deduplicated) that read alike."""
    import json

    head = "abc1234" + "0" * 33
    pr = {"kind": "review_pr", "repo": "acme/widgets", "number": 12, "head_sha": head}
    tasks = {
        "w-shard-1": {**pr, "shard": {"index": 0, "count": 2}},
        "w-shard-2": {**pr, "shard": {"index": 1, "count": 2}},
        "w-summary": {**pr, "kind": "summarize"},
    }
    with Store.open(None, Path(os.environ["SWARM_DATA_DIR"])) as store:
        run_id = store.create_run("manual")
        for worker_id, task in tasks.items():
            store.create_worker(
                NewWorker(
                    run_id,
                    worker_id=worker_id,
                    role_chain=["reviewer"],
                    task=task,
                    status="running",
                )
            )
        store.abandon_run(run_id, "interrupted", status="cancelled")
    seen = swarm("runs", run_id, "--json")
    assert seen.code == 0, seen.output
    [workers] = [
        table for table in map(json.loads, seen.lines) if table["title"].startswith("workers of ")
    ]
    assert {row["worker"]: row["task"] for row in workers["rows"]} == {
        "w-shard-1": "acme/widgets#12@abc1234 [shard 1/2]",
        "w-shard-2": "acme/widgets#12@abc1234 [shard 2/2]",
        "w-summary": "acme/widgets#12@abc1234",
    }


def _two_runs() -> None:
    with Store.open(None, Path(os.environ["SWARM_DATA_DIR"])) as store:
        for run_id in ("run-3f2a01", "run-3f9b02"):
            store.create_run("flow", run_id=run_id)
            store.create_worker(NewWorker(run_id, worker_id=f"w-{run_id}", role_chain=["reviewer"]))


def test_runs_takes_the_start_of_a_run_id_with_or_without_its_run_prefix() -> None:
    _two_runs()
    for typed in ("run-3f2", "3f2a", "run-3f2a01"):
        seen = swarm("runs", typed)
        assert seen.code == 0, seen.output
        assert "workers of run-3f2a01" in seen.output and "w-run-3f9b02" not in seen.output


def test_an_ambiguous_or_unknown_run_is_one_line_and_exit_2() -> None:
    _two_runs()
    both = swarm("runs", "3f")
    assert both.code == EXIT_USAGE and len(both.lines) == 1, both.output
    assert both.first_line.startswith("error: run '3f' is ambiguous: it starts run-3f")
    assert "run-3f2a01" in both.first_line and "run-3f9b02" in both.first_line
    assert both.first_line.endswith("; type more of the id")
    unknown = {
        ("runs", "run-3f2a0l"): "error: no run 'run-3f2a0l' (did you mean 'run-3f2a01'?); "
        "`swarm runs` lists the runs",
        ("run", "--retry", "nope"): "error: no run 'nope'; `swarm runs` lists the runs",
    }
    for command, line in unknown.items():
        assert_error(swarm(*command), line, EXIT_USAGE)


def test_a_run_lists_every_item_it_skipped_or_left_with_its_reason() -> None:
    """A run that started no worker (all done, drafts, the cost cap) still says why."""
    report = {
        "role": "reviewer",
        "repos": ["acme/widgets"],
        "left_alone": ["acme/widgets#1@abc1234: already done at this head"],
        "skipped": ["acme/widgets#2: author_skipped: author bot is in skip.authors"],
        "left_by_cost_cap": ["acme/widgets#4@def5678"],
        "cost_cap_reason": "the run's $0.10 cap would be passed",
        "unreadable": ["acme/widgets#5: GitHub answered 502"],
        "not_open": ["acme/widgets#9"],
    }
    with Store.open(None, Path(os.environ["SWARM_DATA_DIR"])) as store:
        run_id = store.create_run("flow")
        store.finish_run(run_id, "partial", {"workers": 0, "report": report})
    seen = swarm("runs", run_id)
    assert seen.code == 0, seen.output
    [row] = _rows_naming(seen.lines, run_id)  # the run's own row first: role, repos, cost
    assert (row["role"], row["repos"], row["workers"]) == ("reviewer", "acme/widgets", "0"), row
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in seen.lines if "│" in line]
    assert {row[0]: row[1] for row in cells if row[0].startswith("acme/")} == {
        "acme/widgets#1@abc1234": "already done at this head",
        "acme/widgets#2": ".github/swarm.yaml: author_skipped: author bot is in skip.authors",
        "acme/widgets#4@def5678": "left by the cost cap: the run's $0.10 cap would be passed",
        "acme/widgets#5": "could not be read: GitHub answered 502",
        "acme/widgets#9": "not open",
    }


def test_retry_of_a_run_where_nothing_failed_says_so_and_exits_0() -> None:
    with Store.open(None, Path(os.environ["SWARM_DATA_DIR"])) as store:
        run_id = store.create_run("flow", totals={"asked": {"role": "reviewer"}})
        worker = store.create_worker(
            NewWorker(
                run_id,
                role_chain=["reviewer"],
                task={"kind": "review_pr", "repo": "acme/widgets", "number": 1},
                status="running",
            )
        )
        store.finish_worker(worker, "skipped", blocked_reason="already reviewed at this head")
    seen = swarm("run", "--retry", run_id[:10])
    assert seen.code == 0, seen.output
    assert seen.lines == [f"run {run_id}: no worker failed; nothing to retry"]


def test_retry_refuses_flags_that_choose_other_work() -> None:
    _two_runs()
    assert_error(
        swarm("run", "--retry", "3f2a", "--pr", "acme/widgets#1", "--force"),
        "error: --retry: the run says what to do again; drop --pr, --force",
        EXIT_USAGE,
    )
