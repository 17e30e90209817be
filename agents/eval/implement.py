"""Scoring the writer: each issue's pull request judged by tests it never saw.

A case is solved when the writer opened a pull request and the case's hidden tests, added to
that pull request's head, pass under the repository's own test command, run in the sandbox like
every run of a repository's code (:func:`agents.confine.run_confined`). A pull request whose
hidden tests fail is counted as opened, not as solved: the visible tests passing is what the
writer itself checked, not what the issue asked.

After the writer opens its pull request, the review-and-fix loop runs on it as the product runs
it (agents/kinds/fix.py): the reviewer bot reviews, the writer answers the blocking findings in
a fix round, the reviewer re-reviews, until nothing blocks (ready for review) or the rounds run
out. A case's **rounds to clean** is how many fix rounds that took: 0 when the first review
found nothing blocking, None when it never came clean. The hidden tests judge the final head.
"""

from __future__ import annotations

import json
import tempfile
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from agents.confine import ConfineError, Limits, SandboxUnavailable, run_confined
from agents.eval.cases import ImplementCase

# What the JSON keeps of a hidden run's output: its tail names the failing assertion.
OUTPUT_TAIL = 2000
# The table's width: a terminal's, and what a document takes without wrapping.
WIDTH = 80


@dataclass(frozen=True)
class HiddenRun:
    """The hidden tests at the pull request's head: passed (None: not run, ``line`` says why)."""

    passed: bool | None
    line: str
    output: str = ""


# How a pull request's review-and-fix loop ended (agents/kinds/fix.py's settled states).
CLEAN = "clean"  # nothing blocking: marked ready for review
STILL_OPEN = "still open"  # rounds spent with blocking findings left: listed in its body
UNSETTLED = "unsettled"  # neither within the evaluation's passes (a review or a round failed)


@dataclass(frozen=True)
class Rounds:
    """The review-and-fix loop on one pull request: how it ended, the fix rounds it took, what
    each round cost (the fixer's worker, in order) and what the reviews of it cost in all."""

    end: str
    rounds: int
    round_costs_usd: tuple[float, ...] = ()
    review_cost_usd: float = 0.0

    @property
    def to_clean(self) -> int | None:
        return self.rounds if self.end == CLEAN else None


@dataclass(frozen=True)
class CaseResult:
    """One issue's end: the writer's pull request (None: it opened none), the hidden tests on it
    (None without a pull request), and what the writer spent."""

    case: ImplementCase
    repo: str
    issue: int
    pull: int | None
    hidden: HiddenRun | None
    status: str  # the writer's worker status, or "no worker" when no worker took the issue
    reason: str | None = None
    cost_usd: float = 0.0
    turns: int = 0
    test_runs: int = 0
    # The review-and-fix loop (None without a pull request), and the hidden tests at the
    # writer's first head when the rounds moved it (None when they did not).
    rounds: Rounds | None = None
    hidden_first: HiddenRun | None = None

    @property
    def solved(self) -> bool:
        return self.pull is not None and self.hidden is not None and self.hidden.passed is True


def run_hidden(tree: Mapping[str, str | bytes], case: ImplementCase) -> HiddenRun:
    """The case's hidden files added to ``tree`` (the pull request's head), and its test command
    run on them in the sandbox. No sandbox here raises :class:`SandboxUnavailable`: the caller
    stops, as nothing runs unsandboxed; any other refusal is this case's ``not run``."""
    with tempfile.TemporaryDirectory(prefix="swarm-eval-hidden-") as folder:
        root = Path(folder).resolve()
        for path, blob in {**tree, **case.hidden}.items():
            target = (root / path).resolve()
            # The head's paths are the writer's: none may land outside the copy.
            if not target.is_relative_to(root) or target == root:
                return HiddenRun(None, f"not run: the head holds a path outside its tree: {path}")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(blob.encode("utf-8") if isinstance(blob, str) else blob)
        limits = Limits(wall_seconds=float(case.timeout_seconds), cpu_seconds=case.timeout_seconds)
        try:
            done = run_confined(root, case.command, limits)
        except SandboxUnavailable:
            raise
        except ConfineError as exc:
            return HiddenRun(None, f"not run: {exc}")
    return HiddenRun(done.passed, done.summary(), done.output[-OUTPUT_TAIL:])


class CaseRow(TypedDict):
    """One issue in the results file: what the writer opened and spent, and what held."""

    id: str
    bug: str
    repo: str
    issue: int
    pull: int | None
    pull_opened: bool
    hidden_passed: bool | None
    hidden_line: str | None
    hidden_output: str | None
    solved: bool
    status: str
    reason: str | None
    cost_usd: float
    turns: int
    test_runs: int
    rounds_end: str | None
    fix_rounds: int | None
    rounds_to_clean: int | None
    round_costs_usd: list[float]
    review_cost_usd: float
    hidden_passed_first_head: bool | None


class Failure(TypedDict):
    id: str
    status: str
    reason: str | None


class ImplementSummary(TypedDict):
    cases: int
    pulls_opened: int
    solved: int
    success_rate: float
    cost_usd: float
    mean_cost_usd: float
    mean_turns: float
    mean_test_runs: float
    clean: int
    still_open: int
    unsettled: int
    mean_rounds_to_clean: float | None
    fix_rounds: int
    rounds_cost_usd: float
    wall_s: float
    failed: list[Failure]


# The results file (``--json``): ``set`` is a keyword, hence the functional form.
class ImplementResults(TypedDict):
    kind: str
    set: str
    model: str
    cases: list[CaseRow]
    summary: ImplementSummary


def results(
    cases: Sequence[CaseResult], *, set_name: str, model: str, wall_s: float
) -> ImplementResults:
    """The evaluation as data: per case and in all (the JSON of ``--json``)."""
    n = max(1, len(cases))
    solved = sum(1 for c in cases if c.solved)
    looped = [c.rounds for c in cases if c.rounds is not None]
    clean = [r.rounds for r in looped if r.end == CLEAN]
    rounds_cost = sum(sum(r.round_costs_usd) + r.review_cost_usd for r in looped)
    return {
        "kind": "implement",
        "set": set_name,
        "model": model,
        "cases": [
            {
                "id": c.case.id,
                "bug": c.case.bug,
                "repo": c.repo,
                "issue": c.issue,
                "pull": c.pull,
                "pull_opened": c.pull is not None,
                "hidden_passed": c.hidden.passed if c.hidden is not None else None,
                "hidden_line": c.hidden.line if c.hidden is not None else None,
                "hidden_output": c.hidden.output if c.hidden is not None else None,
                "solved": c.solved,
                "status": c.status,
                "reason": c.reason,
                "cost_usd": round(c.cost_usd, 6),
                "turns": c.turns,
                "test_runs": c.test_runs,
                "rounds_end": c.rounds.end if c.rounds is not None else None,
                "fix_rounds": c.rounds.rounds if c.rounds is not None else None,
                "rounds_to_clean": c.rounds.to_clean if c.rounds is not None else None,
                "round_costs_usd": (
                    [round(x, 6) for x in c.rounds.round_costs_usd] if c.rounds else []
                ),
                "review_cost_usd": round(c.rounds.review_cost_usd, 6) if c.rounds else 0.0,
                "hidden_passed_first_head": (
                    c.hidden_first.passed if c.hidden_first is not None else None
                ),
            }
            for c in cases
        ],
        "summary": {
            "cases": len(cases),
            "pulls_opened": sum(1 for c in cases if c.pull is not None),
            "solved": solved,
            "success_rate": solved / n,
            "cost_usd": round(sum(c.cost_usd for c in cases), 6),
            "mean_cost_usd": round(sum(c.cost_usd for c in cases) / n, 6),
            "mean_turns": sum(c.turns for c in cases) / n,
            "mean_test_runs": sum(c.test_runs for c in cases) / n,
            # Rounds to clean over the pull requests that came clean; the others are counted.
            "clean": len(clean),
            "still_open": sum(1 for r in looped if r.end == STILL_OPEN),
            "unsettled": sum(1 for r in looped if r.end == UNSETTLED),
            "mean_rounds_to_clean": sum(clean) / len(clean) if clean else None,
            "fix_rounds": sum(r.rounds for r in looped),
            "rounds_cost_usd": round(rounds_cost, 6),
            "wall_s": round(wall_s, 1),
            # Workers that did not succeed: a writer that opens nothing ends failed, with why.
            "failed": [
                {"id": c.case.id, "status": c.status, "reason": c.reason}
                for c in cases
                if c.status not in ("succeeded", "skipped")
            ],
        },
    }


def table(data: ImplementResults) -> str:
    """The results as markdown a person reads at 80 columns and pastes into a document."""
    s = data["summary"]
    rows = [
        f"**{data['set']}**, model `{data['model']}`: {s['cases']} issues, {s['solved']} solved "
        f"({s['success_rate']:.1%})",
        "",
        "| case | PR | rounds | hidden tests | cost | fix cost | turns | test runs |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in data["cases"]:
        pull = f"#{c['pull']}" if c["pull"] is not None else "none"
        hidden = {True: "pass", False: "FAIL", None: "not run"}[c["hidden_passed"]]
        if c["pull"] is None:
            hidden = "-"  # nothing to test
        fixing = f"${sum(c['round_costs_usd']):.4f}" if c["round_costs_usd"] else "-"
        rows.append(
            f"| {c['id']} | {pull} | {rounds_cell(c)} | {hidden} | ${c['cost_usd']:.4f} | "
            f"{fixing} | {c['turns']} | {c['test_runs']} |"
        )
    mean_rounds = s["mean_rounds_to_clean"]
    rows.append(
        f"| **mean** | {s['pulls_opened']} of {s['cases']} | "
        f"{'-' if mean_rounds is None else f'{mean_rounds:.2f}'} | {s['solved']} of "
        f"{s['cases']} | ${s['mean_cost_usd']:.4f} | | {s['mean_turns']:.1f} | "
        f"{s['mean_test_runs']:.1f} |"
    )
    rows += [
        "",
        f"Success rate {s['success_rate']:.1%}: a pull request opened and its hidden tests pass "
        "at its final head.",
        f"Rounds to clean (fix rounds until the reviewer found nothing blocking): {s['clean']} "
        f"of {s['pulls_opened']} pull requests came clean"
        + (f", in {mean_rounds:.2f} rounds on average" if mean_rounds is not None else "")
        + f"; {s['still_open']} still open when the rounds ran out, {s['unsettled']} unsettled.",
        f"Spend: ${s['cost_usd']:.4f} writing and ${s['rounds_cost_usd']:.4f} reviews and fix "
        f"rounds in all, {s['wall_s']:.1f} s; per issue ${s['mean_cost_usd']:.4f} writing, "
        f"{s['mean_turns']:.1f} turns, {s['mean_test_runs']:.1f} test runs.",
    ]
    for failed in s["failed"]:
        rows.append(f"{failed['id']}: {failed['status']}: {failed['reason'] or 'no reason given'}")
    # The prose wrapped at the width the rows keep to.
    return "\n".join(
        line if line.startswith("|") or len(line) <= WIDTH else textwrap.fill(line, WIDTH)
        for line in rows
    )


def rounds_cell(case: CaseRow) -> str:
    """A case's rounds to clean as the table shows it: the number, ``none`` when the rounds ran
    out with findings left, ``?`` when the loop did not settle, ``-`` without a pull request."""
    if case["rounds_end"] is None:
        return "-"
    if case["rounds_end"] == CLEAN:
        return str(case["rounds_to_clean"])
    return "none" if case["rounds_end"] == STILL_OPEN else "?"


def write(data: ImplementResults, path: Path) -> None:
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
