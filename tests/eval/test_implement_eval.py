"""``swarm eval --kind implement``: the shipped issues through the real implementer flow with the
scripted model, each pull request through the real review-and-fix loop (reviewer, fixer,
re-review), judged by hidden tests on its final head in the sandbox. The scripted writer fixes
the five bug shapes it knows, opens nothing for the bug it does not recognise, and its pull
request for the two-bug issue fails the hidden test: a success rate below 100%, as it should be.
Its bare ``except:`` draws the reviewer's finding: one fix round takes the pull request to clean
where the try body names the error, and where it does not the rounds run out with the finding
open. The set itself is checked: every hidden test fails at the base (so passing it means the
writer fixed something) and every visible test passes there (so the writer starts green)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.eval.cases import CONFIG_PATH, load_case, load_cases
from agents.eval.implement import run_hidden
from agents.eval.labels import EvalSetError
from sandbox.eval import IMPLEMENT_BASELINE, IMPLEMENT_SET
from tests.bwrap import require_bwrap
from tests.eval.running import run_eval

CASES = load_cases(IMPLEMENT_SET)
SOLVED = {"clamp-volume", "empty-mean-latency", "off-by-one-total-weight", "zero-split-bill"}
# Solved after the review-and-fix loop: one round to clean, and one never clean.
ONE_ROUND, NEVER_CLEAN = "unguarded-parse-ports", "unknown-name-stock-levels"


@pytest.mark.slow
@pytest.mark.prefect
@pytest.mark.timeout(600)
def test_the_scripted_writer_solves_the_bugs_it_knows_and_the_rounds_take_its_bare_except_clean(
    tmp_path: Path,
) -> None:
    require_bwrap()
    out = tmp_path / "implement.json"
    done = run_eval(
        tmp_path / "data",
        "--kind",
        "implement",
        "--model",
        "scripted",
        "--json",
        str(out),
        "--baseline",
        str(IMPLEMENT_BASELINE),
        timeout=540,
        COLUMNS="80",
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "eval baseline holds" in done.stdout
    data = json.loads(out.read_text())
    assert data["kind"] == "implement" and data["model"] == "scripted"
    by_id = {c["id"]: c for c in data["cases"]}
    assert set(by_id) == {c.id for c in CASES}
    for case_id in SOLVED | {ONE_ROUND, NEVER_CLEAN}:
        case = by_id[case_id]
        assert case["pull"] is not None and case["hidden_passed"] is True, case
        assert case["solved"] and case["status"] == "succeeded"
        assert case["test_runs"] == 1 and case["turns"] > 0 and case["cost_usd"] > 0
        # Every pull request was reviewed, and what was clean at once took no round.
        assert case["review_cost_usd"] > 0
    for case_id in SOLVED | {"two-bugs-count-late"}:
        case = by_id[case_id]
        assert (case["rounds_end"], case["rounds_to_clean"], case["round_costs_usd"]) == (
            "clean",
            0,
            [],
        ), case
        assert case["hidden_passed_first_head"] is None, "the head moved without a round"
    # The bare except: the reviewer flags it, the fixer narrows it to ValueError (the int( in
    # the try body names the error), the re-review is clean. At the writer's first head the
    # hidden test of a caller's mistake failed (the bare except swallowed it); at the final
    # head it passes.
    fixed = by_id[ONE_ROUND]
    assert (fixed["rounds_end"], fixed["fix_rounds"], fixed["rounds_to_clean"]) == ("clean", 1, 1)
    assert len(fixed["round_costs_usd"]) == 1 and fixed["round_costs_usd"][0] > 0
    assert fixed["hidden_passed_first_head"] is False
    # Nothing names the error: the first round narrows only to Exception, which the reviewer
    # flags again, the second changes nothing and the rounds stop with the finding open. The
    # hidden tests pass at both heads: resolved, not clean.
    open_ = by_id[NEVER_CLEAN]
    assert (open_["rounds_end"], open_["fix_rounds"], open_["rounds_to_clean"]) == (
        "still open",
        2,
        None,
    )
    assert len(open_["round_costs_usd"]) == 2 and open_["hidden_passed_first_head"] is True
    # The bug it does not recognise: no pull request, nothing to test, the worker says why.
    missed = by_id["leap-year"]
    assert missed["pull"] is None and missed["hidden_passed"] is None and not missed["solved"]
    assert missed["test_runs"] == 0 and "without opening a pull request" in missed["reason"]
    assert missed["rounds_end"] is None and missed["rounds_to_clean"] is None
    # Two bugs, one fixed: the writer's own tests pass and it opens a pull request; the hidden
    # test of the bug it left fails, and says which.
    half = by_id["two-bugs-count-late"]
    assert half["pull"] is not None and half["hidden_passed"] is False and not half["solved"]
    assert "test_on_the_limit_is_on_time" in half["hidden_output"]
    assert "test_the_last_delivery_counts" not in half["hidden_output"]
    summary = data["summary"]
    assert (summary["cases"], summary["pulls_opened"], summary["solved"]) == (8, 7, 6)
    assert summary["success_rate"] == pytest.approx(6 / 8)
    assert summary["mean_test_runs"] == pytest.approx(7 / 8)
    assert summary["mean_cost_usd"] > 0 and summary["mean_turns"] > 0
    assert (summary["clean"], summary["still_open"], summary["unsettled"]) == (6, 1, 0)
    assert summary["mean_rounds_to_clean"] == pytest.approx(1 / 6)
    assert summary["fix_rounds"] == 3 and summary["rounds_cost_usd"] > 0
    # The table a person reads, at 80 columns.
    table = done.stdout[done.stdout.index("**implement**") :]
    assert "| two-bugs-count-late | #" in table and "| 0 | FAIL |" in table
    assert "| leap-year | none | - | - |" in table
    assert f"| {ONE_ROUND} | #" in table and "| 1 | pass |" in table
    assert f"| {NEVER_CLEAN} | #" in table and "| none | pass |" in table
    assert "| **mean** | 7 of 8 | 0.17 | 6 of 8 |" in table
    assert "Success rate 75.0%" in table and "6 of 7" in table
    assert "Traceback" not in done.stdout + done.stderr
    report = table.split("\nresults: ", 1)[0]
    assert all(len(line) <= 80 for line in report.splitlines()), table


def test_every_hidden_test_fails_at_the_base_and_every_visible_one_passes() -> None:
    require_bwrap()
    for case in CASES:
        base = case.repository_files()
        assert not set(case.hidden) & set(base), f"{case.id}: a hidden file is in the repository"
        visible = run_hidden(base, case.model_copy(update={"hidden": {"x.txt": ""}}))
        assert visible.passed is True, f"{case.id}: visible tests at the base: {visible.output}"
        hidden = run_hidden(base, case)
        assert hidden.passed is False, f"{case.id}: the hidden tests pass before any fix"


def test_the_set_covers_every_bug_shape_of_the_scripted_writer_and_one_it_does_not_know() -> None:
    from sandbox.model.implement import SHAPES

    bugs = {case.bug for case in CASES}
    shapes = {shape.name for shape in SHAPES}
    assert shapes <= bugs
    assert bugs - shapes, "no case the scripted writer cannot solve on sight"


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
    from agents.eval.implement import results
    from flows.cli.evaluation_implement import against_baseline, baseline_rate

    floor = baseline_rate(IMPLEMENT_BASELINE)
    assert 0 < floor < 1
    data = results([], set_name="implement", model="scripted", wall_s=0.0)
    data["summary"]["success_rate"] = 0.5
    assert against_baseline(data, floor) == 1
    data["summary"]["success_rate"] = 6 / 8
    assert against_baseline(data, floor) == 0
    # An earlier --json file is a baseline too.
    earlier = tmp_path / "earlier.json"
    earlier.write_text(json.dumps({"summary": {"success_rate": 0.75}}))
    assert baseline_rate(earlier) == 0.75
    broken = tmp_path / "broken.json"
    broken.write_text("{}")
    with pytest.raises(EvalSetError, match="no success rate to hold"):
        baseline_rate(broken)


def test_rounds_to_clean_are_averaged_over_the_clean_pulls_and_the_rest_counted_apart() -> None:
    from agents.eval.implement import CLEAN, STILL_OPEN, UNSETTLED, CaseResult, Rounds, results
    from agents.eval.implement import table as render

    def case(n: int, rounds: Rounds | None) -> CaseResult:
        return CaseResult(
            case=CASES[n],
            repo=f"acme/implement-{CASES[n].id}",
            issue=1,
            pull=2 if rounds is not None else None,
            hidden=None,
            status="succeeded" if rounds is not None else "failed",
            rounds=rounds,
        )

    data = results(
        [
            case(0, Rounds(CLEAN, 0)),
            case(1, Rounds(CLEAN, 2, (0.02, 0.01), 0.05)),
            case(2, Rounds(STILL_OPEN, 3, (0.02, 0.02, 0.02), 0.08)),
            case(3, Rounds(UNSETTLED, 0, (), 0.0)),
            case(4, None),
        ],
        set_name="implement",
        model="scripted",
        wall_s=1.0,
    )

    s = data["summary"]
    assert (s["clean"], s["still_open"], s["unsettled"], s["fix_rounds"]) == (2, 1, 1, 5)
    assert s["mean_rounds_to_clean"] == 1.0
    assert s["rounds_cost_usd"] == pytest.approx(0.22)
    cells = [c["rounds_to_clean"] for c in data["cases"]]
    assert cells == [0, 2, None, None, None]
    shown = render(data)
    rows = [line.split(" | ")[2] for line in shown.splitlines() if line.startswith("| ")][1:6]
    assert rows == ["0", "2", "none", "?", "-"]
    assert "2 of 4 pull requests came clean, in 1.00 rounds on average" in " ".join(shown.split())
    assert all(len(line) <= 80 for line in shown.splitlines())
