"""``swarm eval --kind implement``: the shipped issues through the real implementer flow with the
scripted model, judged by hidden tests on each pull request's head in the sandbox. The scripted
writer fixes the four bug shapes it knows, opens nothing for the bug it does not recognise, and
its pull request for the two-bug issue fails the hidden test: a success rate below 100%, as it
should be. The set itself is checked: every hidden test fails at the base (so passing it means
the writer fixed something) and every visible test passes there (so the writer starts green)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agents.eval.cases import CONFIG_PATH, load_case, load_cases
from agents.eval.implement import run_hidden
from agents.eval.labels import EvalSetError
from sandbox.eval import IMPLEMENT_BASELINE, IMPLEMENT_SET
from tests.bwrap import require_bwrap
from tests.paths import ROOT
from tests.python_process import run_python

CASES = load_cases(IMPLEMENT_SET)
SOLVED = {"clamp-volume", "empty-mean-latency", "off-by-one-total-weight", "zero-split-bill"}


@pytest.mark.slow
@pytest.mark.prefect
@pytest.mark.timeout(600)
def test_the_scripted_writer_solves_the_bugs_it_knows_and_misses_the_others(
    tmp_path: Path,
) -> None:
    from flows.local.prefect_server import prefect_home, stop

    require_bwrap()
    out = tmp_path / "implement.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SWARM_", "PREFECT_API"))}
    env["COLUMNS"] = "80"
    try:
        done = run_python(
            "-m",
            "flows",
            "eval",
            "--kind",
            "implement",
            "--model",
            "scripted",
            "--json",
            str(out),
            "--baseline",
            str(IMPLEMENT_BASELINE),
            "--data-dir",
            str(tmp_path / "data"),
            env=env,
            cwd=ROOT,
            timeout=540,
        )
    finally:
        # The eval starts the data directory's local Prefect server; its keeper stops it only
        # when the folder goes.
        stop(prefect_home(tmp_path / "data"))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "eval baseline holds" in done.stdout
    data = json.loads(out.read_text())
    assert data["kind"] == "implement" and data["model"] == "scripted"
    by_id = {c["id"]: c for c in data["cases"]}
    assert set(by_id) == {c.id for c in CASES}
    for case_id in SOLVED:
        case = by_id[case_id]
        assert case["pull"] is not None and case["hidden_passed"] is True, case
        assert case["solved"] and case["status"] == "succeeded"
        assert case["test_runs"] == 1 and case["turns"] > 0 and case["cost_usd"] > 0
    # The bug it does not recognise: no pull request, nothing to test, the worker says why.
    missed = by_id["leap-year"]
    assert missed["pull"] is None and missed["hidden_passed"] is None and not missed["solved"]
    assert missed["test_runs"] == 0 and "without opening a pull request" in missed["reason"]
    # Two bugs, one fixed: the writer's own tests pass and it opens a pull request; the hidden
    # test of the bug it left fails, and says which.
    half = by_id["two-bugs-count-late"]
    assert half["pull"] is not None and half["hidden_passed"] is False and not half["solved"]
    assert "test_on_the_limit_is_on_time" in half["hidden_output"]
    assert "test_the_last_delivery_counts" not in half["hidden_output"]
    summary = data["summary"]
    assert (summary["cases"], summary["pulls_opened"], summary["solved"]) == (6, 5, 4)
    assert summary["success_rate"] == pytest.approx(4 / 6)
    assert summary["mean_test_runs"] == pytest.approx(5 / 6)
    assert summary["mean_cost_usd"] > 0 and summary["mean_turns"] > 0
    # The table a person reads, at 80 columns.
    table = done.stdout[done.stdout.index("**implement**") :]
    assert "| two-bugs-count-late | #" in table and "| FAIL |" in table
    assert "| leap-year | none | - |" in table
    assert "Success rate 66.7%" in table
    assert "Traceback" not in done.stdout + done.stderr
    assert all(len(line) <= 80 for line in table.splitlines() if line.startswith("|")), table


def test_every_hidden_test_fails_at_the_base_and_every_visible_one_passes() -> None:
    require_bwrap()
    for case in CASES:
        base = case.repository_files()
        assert not set(case.hidden) & set(base), f"{case.id}: a hidden file is in the repository"
        visible = run_hidden(base, case.model_copy(update={"hidden": {"x.txt": ""}}))
        assert visible.passed is True, f"{case.id}: visible tests at the base: {visible.output}"
        hidden = run_hidden(base, case)
        assert hidden.passed is False, f"{case.id}: the hidden tests pass before any fix"


def test_the_set_covers_the_scripted_writers_four_bug_shapes_and_one_it_does_not_know() -> None:
    from sandbox.model.implement import SHAPES

    bugs = {case.bug for case in CASES}
    assert {shape.name for shape in SHAPES} <= bugs
    assert len(CASES) >= 5


def test_a_head_path_outside_its_tree_is_not_run(tmp_path: Path) -> None:
    case = CASES[0]
    marker = tmp_path / "escaped.py"
    tree = {**case.repository_files(), f"../../../../../../..{marker}": "x = 1\n"}
    seen = run_hidden(tree, case)
    assert seen.passed is None and "outside its tree" in seen.line
    assert not marker.exists()


def test_a_case_that_shows_its_hidden_test_in_the_repository_is_refused(tmp_path: Path) -> None:
    source = (IMPLEMENT_SET / "clamp-volume.yaml").read_text()
    leaked = source.replace(
        "  tests/test_volume.py: |", "  tests/test_hidden_volume.py: x\n  tests/test_volume.py: |"
    )
    path = tmp_path / "clamp-volume.yaml"
    path.write_text(leaked)
    with pytest.raises(EvalSetError, match=r"hidden file tests/test_hidden_volume\.py is also in"):
        load_case(path)


def test_the_repository_gets_its_test_command_as_swarm_yaml_reads_it() -> None:
    from agents.planning.repo_config import parse_repo_config

    case = CASES[0]
    config = parse_repo_config(case.repository_files()[CONFIG_PATH])
    assert config.tests is not None
    assert list(config.tests.command) == case.command
    assert config.tests.timeout_seconds == case.timeout_seconds


def test_the_success_rate_below_the_baseline_exits_1(tmp_path: Path) -> None:
    from flows.cli.evaluation_implement import against_baseline, baseline_rate

    floor = baseline_rate(IMPLEMENT_BASELINE)
    assert 0 < floor < 1
    assert against_baseline({"set": "implement", "summary": {"success_rate": 0.5}}, floor) == 1
    assert against_baseline({"set": "implement", "summary": {"success_rate": 4 / 6}}, floor) == 0
    # An earlier --json file is a baseline too.
    earlier = tmp_path / "earlier.json"
    earlier.write_text(json.dumps({"summary": {"success_rate": 0.75}}))
    assert baseline_rate(earlier) == 0.75
    broken = tmp_path / "broken.json"
    broken.write_text("{}")
    with pytest.raises(EvalSetError, match="no success rate to hold"):
        baseline_rate(broken)
