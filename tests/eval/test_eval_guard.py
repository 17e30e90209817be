"""The regression guard: ``swarm eval --model scripted`` over the shipped set, through the real
flow, holds the recorded baseline. The scripted model finds only what its rules know, the same way
every time, so a drop means the pipeline lost a finding it delivered before."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sandbox.eval import DEFAULT_SET
from tests.paths import ROOT
from tests.python_process import run_python

BASELINE = DEFAULT_SET.parent / "baseline.json"

pytestmark = [pytest.mark.slow, pytest.mark.prefect]


@pytest.mark.timeout(1200)
def test_the_scripted_eval_of_the_shipped_set_holds_its_baseline(tmp_path: Path) -> None:
    from flows.local.prefect_server import prefect_home, stop

    out = tmp_path / "eval.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SWARM_", "PREFECT_API"))}
    try:
        done = run_python(
            "-m",
            "flows",
            "eval",
            "--model",
            "scripted",
            "--baseline",
            str(BASELINE),
            "--json",
            str(out),
            "--data-dir",
            str(tmp_path / "data"),
            env=env,
            cwd=ROOT,
            timeout=1100,
        )
    finally:
        # The eval starts the data directory's local Prefect server, which would otherwise idle
        # on (its keeper stops it only when the folder goes) through the rest of the suite.
        stop(prefect_home(tmp_path / "data"))
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
