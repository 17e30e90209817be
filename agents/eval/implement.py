"""Scoring the writer: each issue's pull request judged by tests it never saw.

A case is solved when the writer opened a pull request and the case's hidden tests, added to
that pull request's head, pass under the repository's own test command, run in the sandbox like
every run of a repository's code (:func:`agents.confine.run_confined`). A pull request whose
hidden tests fail is counted as opened, not as solved: the visible tests passing is what the
writer itself checked, not what the issue asked.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.confine import ConfineError, Limits, SandboxUnavailable, run_confined
from agents.eval.cases import ImplementCase

# What the JSON keeps of a hidden run's output: its tail names the failing assertion.
OUTPUT_TAIL = 2000


@dataclass(frozen=True)
class HiddenRun:
    """The hidden tests at the pull request's head: passed (None: not run, ``line`` says why)."""

    passed: bool | None
    line: str
    output: str = ""


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


def results(
    cases: Sequence[CaseResult], *, set_name: str, model: str, wall_s: float
) -> dict[str, Any]:
    """The evaluation as data: per case and in all (the JSON of ``--json``)."""
    n = max(1, len(cases))
    solved = sum(1 for c in cases if c.solved)
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
            "wall_s": round(wall_s, 1),
            # Workers that did not succeed: a writer that opens nothing ends failed, with why.
            "failed": [
                {"id": c.case.id, "status": c.status, "reason": c.reason}
                for c in cases
                if c.status not in ("succeeded", "skipped")
            ],
        },
    }


def table(data: Mapping[str, Any]) -> str:
    """The results as markdown a person reads at 80 columns and pastes into a document."""
    s = data["summary"]
    rows = [
        f"**{data['set']}**, model `{data['model']}`: {s['cases']} issues, {s['solved']} solved "
        f"({s['success_rate']:.1%})",
        "",
        "| case | PR | hidden tests | cost | turns | test runs |",
        "|---|---|---|---|---|---|",
    ]
    for c in data["cases"]:
        pull = f"#{c['pull']}" if c["pull"] is not None else "none"
        hidden = {True: "pass", False: "FAIL", None: "not run"}[c["hidden_passed"]]
        if c["pull"] is None:
            hidden = "-"  # nothing to test
        rows.append(
            f"| {c['id']} | {pull} | {hidden} | ${c['cost_usd']:.4f} | {c['turns']} | "
            f"{c['test_runs']} |"
        )
    rows.append(
        f"| **mean** | {s['pulls_opened']} of {s['cases']} | {s['solved']} of {s['cases']} | "
        f"${s['mean_cost_usd']:.4f} | {s['mean_turns']:.1f} | {s['mean_test_runs']:.1f} |"
    )
    rows += [
        "",
        f"Success rate {s['success_rate']:.1%}: a pull request opened and its hidden tests pass.",
        f"Spend: ${s['cost_usd']:.4f} in all, {s['wall_s']:.1f} s; per issue "
        f"${s['mean_cost_usd']:.4f}, {s['mean_turns']:.1f} turns, {s['mean_test_runs']:.1f} "
        "test runs.",
    ]
    for failed in s["failed"]:
        rows.append(f"{failed['id']}: {failed['status']}: {failed['reason'] or 'no reason given'}")
    return "\n".join(rows)


def write(data: Mapping[str, Any], path: Path) -> None:
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
