"""``--max-cost``: no worker starts once the run's spend plus what running workers hold would
pass the cap, and the summary says how many PRs were left and why; every run is estimated
before its first worker starts."""

from __future__ import annotations

import pytest

from agents.planning.costs import RunEstimate
from flows.run.report import markdown_summary
from flows.run.spend import watching_estimate
from sandbox.github.seed import WIDGETS
from tests.run.conftest import Swarm, run_swarm

pytestmark = pytest.mark.prefect


def test_a_zero_cap_starts_no_worker_and_the_summary_names_every_pr_left(swarm: Swarm) -> None:
    told: list[RunEstimate] = []
    with watching_estimate(told.append):
        state, report = run_swarm(repos=[WIDGETS], max_cost=0.0, dry_run=True)
    assert state.is_completed(), state.message
    assert report.outcomes == []
    assert len(report.left_by_cost_cap) == 3
    assert "3 PR(s) left by the cost cap" in report.headline()
    summary = markdown_summary(report)
    assert "## Left by the cost cap (3 PR(s))" in summary
    assert "the run's cost cap $0.00 would be passed" in summary
    assert set(swarm.review_counts().values()) == {0}
    # The estimate came before anything was spent, and names PRs, tokens and cost.
    assert len(told) == 1 and told[0].prs == 3 and told[0].workers == 3
    assert told[0].tokens > 0 and told[0].cost_usd > 0
    assert report.estimate == told[0].line()


def test_a_cap_for_about_one_review_stops_dispatch_after_it(swarm: Swarm) -> None:
    told: list[RunEstimate] = []
    with watching_estimate(told.append):
        _, probe = run_swarm(repos=[WIDGETS], max_cost=0.0, dry_run=True)
    one = told[0].cost_usd / told[0].workers
    # One worker at a time: the first gets the whole cap, the rest find too little left.
    state, report = run_swarm(repos=[WIDGETS], max_cost=one * 1.2, max_workers=1)
    assert state.is_completed(), state.message
    spent = sum(o.cost_usd for o in report.outcomes)
    assert len(report.outcomes) == 1 and report.outcomes[0].status == "succeeded"
    assert spent <= one * 1.2
    assert len(report.left_by_cost_cap) == 2
    assert report.new_reviews == 1
    assert probe.outcomes == []


def test_swarm_run_prints_the_estimate_before_any_worker_starts(
    swarm: Swarm, capsys: pytest.CaptureFixture[str]
) -> None:
    from flows.cli.runner import execute_flow
    from flows.run.request import RunRequest

    report = execute_flow(
        RunRequest(repos=[WIDGETS], role="reviewer", dry_run=True, model="scripted", max_cost=0.0)
    )
    out = capsys.readouterr().out
    assert "estimate: 3 PR(s), 3 worker(s), about " in out
    assert "at current prices" in out
    assert report.outcomes == [] and len(report.left_by_cost_cap) == 3


def test_the_printed_summary_names_the_prs_left_and_why(capsys: pytest.CaptureFixture[str]) -> None:
    from flows.cli.console import print_report
    from flows.run.report import RunReport

    report = RunReport(
        run_id="r1",
        role="reviewer",
        repos=[WIDGETS],
        max_cost_usd=0.5,
        left_by_cost_cap=[f"{WIDGETS}#2@abc1234", f"{WIDGETS}#3@def5678"],
        cost_cap_reason="the run's cost cap $0.50 would be passed (spent $0.4800, running "
        "workers held $0.0000)",
    )
    print_report(report)
    out = " ".join(capsys.readouterr().out.split())
    assert "2 PR(s) left by the cost cap" in out
    assert "2 PR(s) left: the run's cost cap $0.50 would be passed (spent $0.4800" in out
    assert f"{WIDGETS}#2@abc1234" in out
