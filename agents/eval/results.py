"""An evaluation's results: the JSON ``swarm eval`` writes, the markdown table it prints, and
``swarm eval compare``: what a change of role, prompt, configuration or model gained and lost."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, TypedDict

from agents.eval.labels import EvalSetError
from agents.eval.scoring import RATES, Figures, PullScore, Rate, Summary, summary
from agents.json_value import JSONObject
from agents.posting.findings import CATEGORIES, SEVERITIES

FORMAT = "swarm-eval/1"


class LabelResult(TypedDict):
    """One labelled problem of a PR, and what found it ("place", "judge"; None: missed)."""

    path: str | None
    lines: list[int] | None
    category: str | None
    severity: str
    comment: str
    found_by: str | None


class PullResult(TypedDict):
    id: str
    clean: bool
    error: str | None
    cost_usd: float
    tokens: int
    wall_s: float
    labels: list[LabelResult]
    # Each finding as the review reported it, with the index of the label it matched (or None).
    findings: list[JSONObject]


# The results file: ``set`` is a keyword, hence the functional form.
class Results(TypedDict):
    format: str
    set: str
    model: str
    summary: Summary
    pulls: list[PullResult]
    judge_verdicts: list[JSONObject]


class Side(TypedDict):
    model: str
    set: str


class Change(TypedDict):
    """What one PR gained and lost from A to B (golden comments), and its false findings."""

    id: str
    gained: list[str]
    lost: list[str]
    false_findings: int


class OverallChange(TypedDict):
    a: Figures
    b: Figures
    delta: dict[Rate, float | None]


class Spend(TypedDict):
    a: float
    b: float


class Comparison(TypedDict):
    a: Side
    b: Side
    overall: OverallChange
    cost_usd: Spend
    pulls: list[Change]
    only_in_a: list[str]


def results(
    scores: Sequence[PullScore], *, set_name: str, model: str, verdicts: Sequence[JSONObject]
) -> Results:
    """Everything one evaluation found, per PR and in sum, as plain JSON-able data."""
    pulls: list[PullResult] = []
    for score in scores:
        by_finding = {m.finding: m for m in score.matches}
        by_label = {m.label: m for m in score.matches}
        pulls.append(
            {
                "id": score.pull.id,
                "clean": score.pull.clean,
                "error": score.error,
                "cost_usd": round(score.cost_usd, 6),
                "tokens": score.tokens,
                "wall_s": round(score.wall_s, 3),
                "labels": [
                    {
                        "path": label.path,
                        "lines": list(label.lines) if label.lines else None,
                        "category": label.category,
                        "severity": label.severity,
                        "comment": label.comment,
                        "found_by": by_label[n].by if n in by_label else None,
                    }
                    for n, label in enumerate(score.pull.findings)
                ],
                "findings": [
                    {
                        **finding.model_dump(exclude_none=True),
                        "label": by_finding[f].label if f in by_finding else None,
                    }
                    for f, finding in enumerate(score.findings)
                ],
            }
        )
    return {
        "format": FORMAT,
        "set": set_name,
        "model": model,
        "summary": summary(scores),
        "pulls": pulls,
        "judge_verdicts": list(verdicts),
    }


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{float(value) * 100:.1f}%"


def table(data: Results) -> str:
    """The summary as markdown: overall, by severity, by category, clean PRs, spend."""
    s = data["summary"]
    rows = [
        f"**{data['set']}**, model `{data['model']}`: {s['pulls']} PRs, {s['labels']} labelled "
        f"problems, {s['findings']} findings",
        "",
        "| | precision | recall | F1 | found | false | missed |",
        "|---|---|---|---|---|---|---|",
    ]

    def row(name: str, f: Figures) -> str:
        return (
            f"| {name} | {_pct(f['precision'])} | {_pct(f['recall'])} | {_pct(f['f1'])} | "
            f"{f['true_positives']} | {f['false_positives']} | {f['false_negatives']} |"
        )

    rows.append(row("**overall**", s["overall"]))
    for severity in SEVERITIES:
        rows.append(row(f"severity {severity}", s["by_severity"][severity]))
    for category in CATEGORIES:
        rows.append(row(f"category {category}", s["by_category"][category]))
    rows += [
        "",
        f"Clean PRs: {s['clean_pulls_with_findings']} of {s['clean_pulls']} got findings "
        f"({s['false_findings_on_clean_pulls']} false findings in all).",
        f"Spend: ${s['cost_usd']:.4f}, {s['tokens']:,} tokens, {s['wall_s']:.1f} s of review "
        f"({_per(s, 'cost_usd', '$', 4)}, {_per(s, 'tokens', '', 0)} tokens, "
        f"{_per(s, 'wall_s', '', 1)} s per PR).",
    ]
    if s["unfinished"]:
        rows.append(f"Not finished: {', '.join(s['unfinished'])}.")
    return "\n".join(rows)


def _per(s: Summary, key: Literal["cost_usd", "tokens", "wall_s"], prefix: str, digits: int) -> str:
    value = float(s[key]) / max(1, int(s["pulls"]))
    return f"{prefix}{value:,.{digits}f}"


def write(data: Results, path: Path) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def read(path: Path) -> Results:
    try:
        # What ``write`` wrote, once its format line below says so.
        data: Results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EvalSetError(f"{path}: not an evaluation's JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise EvalSetError(f"{path}: not an evaluation's JSON (format {FORMAT} expected)")
    return data


def _found(pull: PullResult) -> set[int]:
    return {n for n, label in enumerate(pull["labels"]) if label["found_by"]}


def _false(pull: PullResult) -> list[JSONObject]:
    return [f for f in pull["findings"] if f["label"] is None]


def compare(a: Results, b: Results) -> Comparison:
    """What ``b`` gained and lost against ``a``, per PR and overall."""
    before = {p["id"]: p for p in a["pulls"]}
    changes: list[Change] = []
    for pull in b["pulls"]:
        old = before.get(pull["id"])
        if old is None:
            continue
        gained = sorted(_found(pull) - _found(old))
        lost = sorted(_found(old) - _found(pull))
        false_delta = len(_false(pull)) - len(_false(old))
        if gained or lost or false_delta:
            changes.append(
                {
                    "id": pull["id"],
                    "gained": [pull["labels"][n]["comment"] for n in gained],
                    "lost": [pull["labels"][n]["comment"] for n in lost],
                    "false_findings": false_delta,
                }
            )
    deltas = {
        key: _delta(a["summary"]["overall"][key], b["summary"]["overall"][key]) for key in RATES
    }
    return {
        "a": {"model": a["model"], "set": a["set"]},
        "b": {"model": b["model"], "set": b["set"]},
        "overall": {"a": a["summary"]["overall"], "b": b["summary"]["overall"], "delta": deltas},
        "cost_usd": {"a": a["summary"]["cost_usd"], "b": b["summary"]["cost_usd"]},
        "pulls": changes,
        "only_in_a": sorted(set(before) - {p["id"] for p in b["pulls"]}),
    }


def _delta(x: float | None, y: float | None) -> float | None:
    return None if x is None or y is None else round(y - x, 4)


def comparison_table(c: Comparison) -> str:
    o = c["overall"]
    lines = [
        f"A: `{c['a']['model']}` on {c['a']['set']}; B: `{c['b']['model']}` on {c['b']['set']}",
        "",
        "| | A | B | B - A |",
        "|---|---|---|---|",
    ]
    for key in RATES:
        d = o["delta"][key]
        shown = "-" if d is None else f"{d * 100:+.1f} pts"
        lines.append(f"| {key} | {_pct(o['a'][key])} | {_pct(o['b'][key])} | {shown} |")
    lines.append(f"| cost | ${c['cost_usd']['a']:.4f} | ${c['cost_usd']['b']:.4f} | |")
    lines.append("")
    if not c["pulls"]:
        lines.append("No PR changed.")
    for pull in c["pulls"]:
        parts = [f"+{len(pull['gained'])} found", f"-{len(pull['lost'])} lost"]
        if pull["false_findings"]:
            parts.append(f"{pull['false_findings']:+d} false")
        lines.append(f"- {pull['id']}: {', '.join(parts)}")
        lines += [f"  - gained: {text}" for text in pull["gained"]]
        lines += [f"  - lost: {text}" for text in pull["lost"]]
    if c["only_in_a"]:
        lines.append(f"Only in A (not compared): {', '.join(c['only_in_a'])}")
    return "\n".join(lines)
