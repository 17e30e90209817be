"""A parent run's report over its child runs, read back from the store."""

from __future__ import annotations

from pathlib import Path

from agents.outcome import WorkerOutcome
from agents.store import NewWorker
from agents.store.store import Store
from flows.run.children import ChildRun, child_report, merged_report
from flows.run.report import RunReport
from flows.run.request import RunRequest


def _report(repo: str, posted: int) -> RunReport:
    outcomes = [
        WorkerOutcome(
            worker_id=f"w-{repo[-1]}{n}",
            role="reviewer",
            target=f"{repo}#{n}@abc1234",
            status="succeeded",
            posted=True,
        )
        for n in range(1, posted + 1)
    ]
    return RunReport(run_id=f"run-{repo[-1]}", role="reviewer", repos=[repo], outcomes=outcomes)


def test_a_child_never_fans_out_again_and_covers_only_its_repository() -> None:
    parent = RunRequest(role="security-reviewer", max_workers=16, fan_out=True)
    assert parent.for_child("acme/a", 1).parameters() == {
        "request": {
            "repos": ["acme/a"],
            "role": "security-reviewer",
            "max_workers": 16,
            "fan_out": False,
        }
    }


def test_a_cost_cap_is_shared_out_so_the_children_together_stay_under_it() -> None:
    parent = RunRequest(max_cost=3.0)
    shares = [parent.for_child(f"acme/{n}", 3).max_cost for n in "abc"]
    assert shares == [1.0, 1.0, 1.0]
    assert "max_cost" not in RunRequest().for_child("acme/a", 3).parameters()["request"]


def test_the_parent_counts_every_childs_reviews() -> None:
    children = [
        ChildRun("acme/a", "fr-a", "Completed", _report("acme/a", 2)),
        ChildRun("acme/b", "fr-b", "Completed", _report("acme/b", 3)),
    ]
    report = merged_report("run-p", "reviewer", False, "scripted", children)
    assert report.new_reviews == 5
    assert report.ok
    assert report.repos == ["acme/a", "acme/b"]


def test_a_child_that_left_no_report_fails_the_parent_and_names_its_repository() -> None:
    children = [
        ChildRun("acme/a", "fr-a", "Completed", _report("acme/a", 2)),
        ChildRun("acme/b", "fr-b", "Crashed", None),
    ]
    report = merged_report("run-p", "reviewer", False, "scripted", children)
    assert not report.ok
    assert report.unreadable == ["acme/b: child run fr-b ended Crashed without a report"]
    assert "1 repository(ies) could not be read" in report.headline()


def test_a_childs_invalid_repository_configuration_fails_the_parent_and_is_listed() -> None:
    broken = _report("acme/b", 0).model_copy(
        update={
            "config_errors": ["acme/b: .github/swarm.yaml:2: skip.draft: unknown key"],
            "config_told": ["acme/b#4"],
            "skipped": ["acme/b#5: author_skipped: author x is in skip.authors"],
        }
    )
    children = [
        ChildRun("acme/a", "fr-a", "Completed", _report("acme/a", 1)),
        ChildRun("acme/b", "fr-b", "Failed", broken),
    ]
    report = merged_report("run-p", "reviewer", False, "scripted", children)
    assert not report.ok
    assert report.config_errors == broken.config_errors
    assert report.config_told == ["acme/b#4"] and report.skipped == broken.skipped
    assert "1 problem(s) in .github/swarm.yaml files" in report.headline()


def test_a_child_that_died_with_its_machine_has_its_store_run_and_workers_failed(
    tmp_path: Path,
) -> None:
    with Store.open(None, tmp_path) as store:
        run_id = store.create_run("flow", prefect_flow_run_id="fr-dead")
        # Its process ran on another machine: no local check could tell it is gone.
        held = store.create_worker(
            NewWorker(
                run_id, role_chain=["reviewer"], status="running", host="gone.example", pid=4242
            )
        )
        assert child_report(store, "fr-dead", "Crashed") is None
        assert store.get_run(run_id).status == "failed"
        worker = store.get_worker(held)
        assert worker.status == "failed"
        assert (
            worker.blocked_reason == "stale: its flow run fr-dead ended Crashed without finishing"
        )


def test_a_finished_childs_report_is_read_back_and_its_run_left_alone(tmp_path: Path) -> None:
    with Store.open(None, tmp_path) as store:
        run_id = store.create_run("flow", prefect_flow_run_id="fr-ok")
        report = _report("acme/a", 2)
        store.finish_run(run_id, "succeeded", {"report": report.model_dump(mode="json")})
        found = child_report(store, "fr-ok", "Completed")
        assert found is not None and found.new_reviews == 2
        assert store.get_run(run_id).status == "succeeded"
        assert child_report(store, "fr-never-started", "Crashed") is None
