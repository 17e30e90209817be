"""Scoring a review's findings against a set's labels: matches, precision, recall and F1.

A finding matches a label when it is on the same path, its lines come within
:data:`LINE_TOLERANCE` of the label's, and its category is compatible with the label's (a bug
reported as a security problem still names the problem; a style remark does not name a bug).
Matching is one to one: each label is found at most once, and a second finding of the same
problem counts against precision, as noise a person has to read. A label without a place (an
imported golden comment) can only be matched by the judge (:mod:`agents.eval.judge`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypedDict

from agents.eval.labels import EvalPull, Label
from agents.posting.findings import CATEGORIES, SEVERITIES, Category, Finding

LINE_TOLERANCE = 3
COMPATIBLE: Mapping[Category, frozenset[Category]] = {
    "bug": frozenset({"bug", "security", "performance", "tests"}),
    "security": frozenset({"security", "bug"}),
    "performance": frozenset({"performance", "bug"}),
    "maintainability": frozenset({"maintainability", "style"}),
    "style": frozenset({"style", "maintainability"}),
    "tests": frozenset({"tests", "bug"}),
}
# Decides whether a finding names the problem of a label (the judge); None when it cannot say.
Judge = Callable[[EvalPull, Finding, Label], "bool | None"]


def distance(finding: Finding, label: Label) -> int | None:
    """How many lines apart a finding and a placed label are (0 when they overlap), or None
    when they cannot be the same problem by place and category."""
    if not label.placed or finding.path != label.path:
        return None
    assert label.lines is not None
    if label.category is not None and finding.category not in COMPATIBLE[label.category]:
        return None
    first, last = label.lines
    gap = max(first - finding.line, finding.first_line - last, 0)
    return gap if gap <= LINE_TOLERANCE else None


@dataclass(frozen=True)
class Match:
    finding: int  # index into the PR's findings
    label: int  # index into the PR's labels
    by: str  # "place" or "judge"


@dataclass
class PullScore:
    """One PR's findings against its labels, and what its review cost."""

    pull: EvalPull
    findings: list[Finding]
    matches: list[Match] = field(default_factory=list)
    cost_usd: float = 0.0
    tokens: int = 0
    wall_s: float = 0.0
    error: str | None = None  # the review did not finish: why

    @property
    def found(self) -> set[int]:
        return {m.label for m in self.matches}

    @property
    def true_positives(self) -> int:
        return len(self.matches)

    @property
    def false_positives(self) -> int:
        return len(self.findings) - len(self.matches)

    @property
    def false_negatives(self) -> int:
        return len(self.pull.findings) - len(self.matches)


def match(pull: EvalPull, findings: Sequence[Finding], judge: Judge | None = None) -> list[Match]:
    """One-to-one matches of ``findings`` to ``pull``'s labels: by place first, closest pairs
    first; then, for what is left, by the judge where one is given."""
    pairs = sorted(
        (d, f, n)
        for f, finding in enumerate(findings)
        for n, label in enumerate(pull.findings)
        if (d := distance(finding, label)) is not None
    )
    matches: list[Match] = []
    used_f: set[int] = set()
    used_l: set[int] = set()
    for _, f, n in pairs:
        if f not in used_f and n not in used_l:
            matches.append(Match(f, n, "place"))
            used_f.add(f)
            used_l.add(n)
    if judge is not None:
        for f, finding in enumerate(findings):
            for n, label in enumerate(pull.findings):
                if f in used_f or n in used_l:
                    continue
                if label.path is not None and label.path != finding.path:
                    continue
                if judge(pull, finding, label):
                    matches.append(Match(f, n, "judge"))
                    used_f.add(f)
                    used_l.add(n)
    return sorted(matches, key=lambda m: (m.label, m.finding))


@dataclass(frozen=True)
class Counts:
    true_positives: int = 0
    false_positives: int = 0
    false_negatives: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            self.true_positives + other.true_positives,
            self.false_positives + other.false_positives,
            self.false_negatives + other.false_negatives,
        )

    @property
    def precision(self) -> float | None:
        found = self.true_positives + self.false_positives
        return self.true_positives / found if found else None

    @property
    def recall(self) -> float | None:
        labelled = self.true_positives + self.false_negatives
        return self.true_positives / labelled if labelled else None

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        if p is None or r is None or p + r == 0:
            return None if p is None or r is None else 0.0
        return 2 * p * r / (p + r)


def counts(
    scores: Iterable[PullScore], *, severity: str | None = None, category: str | None = None
) -> Counts:
    """True and false positives and false negatives over ``scores``: of every finding and label,
    or of those of one severity or category (a label by its own, a finding by what it said)."""
    total = Counts()
    for score in scores:
        matched_f = {m.finding for m in score.matches}
        matched_l = {m.label for m in score.matches}

        def keeps(severity_of: str | None, category_of: str | None) -> bool:
            return (severity is None or severity_of == severity) and (
                category is None or category_of == category
            )

        tp = sum(
            1
            for m in score.matches
            if keeps(score.pull.findings[m.label].severity, score.pull.findings[m.label].category)
        )
        fp = sum(
            1
            for f, finding in enumerate(score.findings)
            if f not in matched_f and keeps(finding.severity, finding.category)
        )
        fn = sum(
            1
            for n, label in enumerate(score.pull.findings)
            if n not in matched_l and keeps(label.severity, label.category)
        )
        total = total + Counts(tp, fp, fn)
    return total


# The three rates every figure carries (``Figures``' keys), in the order tables show them.
Rate = Literal["precision", "recall", "f1"]
RATES: tuple[Rate, ...] = ("precision", "recall", "f1")


class Figures(TypedDict):
    """One set of counts and rates (overall, or for one severity or category)."""

    true_positives: int
    false_positives: int
    false_negatives: int
    precision: float | None
    recall: float | None
    f1: float | None


class Summary(TypedDict):
    """The figures of one evaluation, as its results file holds them."""

    pulls: int
    labels: int
    findings: int
    overall: Figures
    by_severity: dict[str, Figures]
    by_category: dict[str, Figures]
    clean_pulls: int
    clean_pulls_with_findings: int
    false_findings_on_clean_pulls: int
    unfinished: list[str]
    cost_usd: float
    tokens: int
    wall_s: float


def summary(scores: Sequence[PullScore]) -> Summary:
    """The figures of one evaluation, as plain data (the JSON ``swarm eval`` writes)."""
    overall = counts(scores)
    clean = [s for s in scores if s.pull.clean]
    return {
        "pulls": len(scores),
        "labels": sum(len(s.pull.findings) for s in scores),
        "findings": sum(len(s.findings) for s in scores),
        "overall": _figures(overall),
        "by_severity": {s: _figures(counts(scores, severity=s)) for s in SEVERITIES},
        "by_category": {c: _figures(counts(scores, category=c)) for c in CATEGORIES},
        "clean_pulls": len(clean),
        "clean_pulls_with_findings": sum(1 for s in clean if s.findings),
        "false_findings_on_clean_pulls": sum(len(s.findings) for s in clean),
        "unfinished": sorted(s.pull.id for s in scores if s.error),
        "cost_usd": round(sum(s.cost_usd for s in scores), 6),
        "tokens": sum(s.tokens for s in scores),
        "wall_s": round(sum(s.wall_s for s in scores), 3),
    }


def _figures(c: Counts) -> Figures:
    return {
        "true_positives": c.true_positives,
        "false_positives": c.false_positives,
        "false_negatives": c.false_negatives,
        "precision": None if c.precision is None else round(c.precision, 4),
        "recall": None if c.recall is None else round(c.recall, 4),
        "f1": None if c.f1 is None else round(c.f1, 4),
    }
