"""The regression guard: ``swarm eval --model scripted`` over the shipped set, through the real
flow, holds the recorded baseline. The scripted model finds only what its rules know, the same way
every time, so a drop means the pipeline lost a finding it delivered before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandbox.eval import DEFAULT_SET
from tests.eval.running import run_eval

BASELINE = DEFAULT_SET.parent / "baseline.json"

pytestmark = [pytest.mark.slow, pytest.mark.prefect]


@pytest.mark.timeout(1200)
def test_the_scripted_eval_of_the_shipped_set_holds_its_baseline(tmp_path: Path) -> None:
    out = tmp_path / "eval.json"
    done = run_eval(
        tmp_path / "data",
        "--model",
        "scripted",
        "--baseline",
        str(BASELINE),
        "--json",
        str(out),
        timeout=1100,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "eval baseline holds" in done.stdout
    data = json.loads(out.read_text())
    assert data["summary"]["pulls"] >= 40 and data["summary"]["unfinished"] == []
    # The table a person reads is on the console.
    assert "| **overall** |" in done.stdout


def test_the_baseline_names_precision_and_recall_of_the_shipped_set() -> None:
    baseline = json.loads(BASELINE.read_text())
    assert baseline["set"] == "default" and baseline["model"] == "scripted"
    assert 0 < baseline["precision"] <= 1 and 0 < baseline["recall"] <= 1


def test_a_fall_below_the_baseline_exits_1_with_the_figure_that_fell(tmp_path: Path) -> None:
    from agents.eval.results import results
    from flows.cli.evaluation import against_baseline

    high = tmp_path / "high.json"
    high.write_text(json.dumps({"precision": 0.9, "recall": 0.5}))
    data = results([], set_name="default", model="scripted", verdicts=[])
    overall = data["summary"]["overall"]
    overall["precision"], overall["recall"] = 0.8, 0.6
    assert against_baseline(data, high) == 1
    overall["precision"] = 0.95
    assert against_baseline(data, high) == 0
