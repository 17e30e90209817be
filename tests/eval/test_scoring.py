"""Scoring findings against labels: place and category decide a match, one to one, and the
figures follow from the matches."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.eval.labels import EvalPull, EvalSetError, Label, label_problems, load_pull, load_set
from agents.eval.scoring import PullScore, counts, match, summary
from agents.posting.findings import Finding
from sandbox.eval import DEFAULT_SET

SQL = Label(
    path="app.py", lines=(12, 13), category="security", severity="critical", comment="injection"
)
LEAK = Label(path="app.py", lines=(30, 30), category="bug", severity="minor", comment="leak")


def pull(*labels: Label) -> EvalPull:
    return EvalPull(
        id="p",
        title="t",
        language="python",
        files={"app.py": {"head": "x\n" * 40}},
        findings=list(labels),
    )


def finding(
    line: int, category: str = "security", path: str = "app.py", start: int | None = None
) -> Finding:
    return Finding(
        path=path, line=line, start_line=start, severity="major", category=category, message="m"
    )


def test_a_finding_a_few_lines_off_of_a_compatible_category_matches() -> None:
    assert [m.label for m in match(pull(SQL), [finding(15, "bug")])] == [0]


def test_a_finding_far_off_on_another_path_or_of_an_unrelated_category_does_not() -> None:
    p = pull(SQL)
    assert match(p, [finding(20)]) == []
    assert match(p, [finding(12, path="other.py")]) == []
    assert match(p, [finding(12, "style")]) == []


def test_each_label_is_found_once_and_a_second_finding_is_a_false_one() -> None:
    p = pull(SQL, LEAK)
    findings = [finding(13), finding(12), finding(30, "bug")]
    score = PullScore(p, findings, matches=match(p, findings))
    assert sorted(m.label for m in score.matches) == [0, 1]
    assert (score.true_positives, score.false_positives, score.false_negatives) == (2, 1, 0)


def test_precision_recall_and_f1_follow_from_the_matches() -> None:
    p = pull(SQL, LEAK)
    findings = [finding(12), finding(5, "style")]
    scores = [PullScore(p, findings, matches=match(p, findings))]
    overall = counts(scores)
    assert (overall.precision, overall.recall, overall.f1) == (0.5, 0.5, 0.5)
    assert counts(scores, severity="minor").recall == 0.0
    assert counts(scores, category="security").recall == 1.0


def test_clean_prs_count_their_false_findings() -> None:
    clean = pull()
    scores = [PullScore(clean, [finding(3)]), PullScore(clean, [])]
    figures = summary(scores)
    assert figures["clean_pulls"] == 2
    assert figures["clean_pulls_with_findings"] == 1
    assert figures["false_findings_on_clean_pulls"] == 1
    assert figures["overall"]["recall"] is None  # nothing was labelled


def test_a_judge_matches_what_place_cannot() -> None:
    unplaced = Label(severity="major", comment="the retry loop never gives up")
    p = pull(unplaced)
    matched = match(p, [finding(7, "bug")], judge=lambda *_: True)
    assert [(m.label, m.by) for m in matched] == [(0, "judge")]


def test_the_shipped_set_is_large_varied_and_its_labels_point_at_their_code() -> None:
    pulls = load_set(DEFAULT_SET)
    defects = [p for p in pulls if not p.clean]
    assert len(pulls) >= 40 and len(defects) >= 30 and len(pulls) - len(defects) >= 10
    assert len({p.language for p in defects}) >= 3
    assert [problem for p in pulls for problem in label_problems(p)] == []


def test_a_set_file_with_a_mistake_names_the_file_and_the_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad-pr.yaml"
    bad.write_text(
        "title: x\nlanguage: python\nfiles: {a.py: {head: x}}\nfindings:\n"
        "  - {path: a.py, lines: [1, 1], severity: urgent, comment: c}\n"
    )
    with pytest.raises(EvalSetError, match=r"bad-pr.yaml: findings.0.severity"):
        load_pull(bad)
