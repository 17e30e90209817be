"""The draft pull request's body: the model's plan and notes, then what code knows for certain.

The plan and the notes are the model's words about an issue anyone could have written: they are
redacted and made inert here (no hidden-comment markers), and the request path sanitises the
whole body like every text the bot posts (mentions, links, markup). What changed, the tests run
and their results, and what the task cost are written by code from what happened, never by the
model, so a reader can trust those lines whatever the model said.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agents.posting.keys import inert
from agents.redact import redact
from agents.writer.bench import TestRun
from agents.writer.rounds import OpenFinding

MAX_MODEL_CHARS = 6000  # each of the plan and the notes


@dataclass(frozen=True)
class ChangedFile:
    """One file of the branch's change against the base, as GitHub's compare lists it."""

    path: str
    status: str
    additions: int
    deletions: int


def _model_text(text: str) -> str:
    cleaned = inert(redact(text)).strip()
    if len(cleaned) > MAX_MODEL_CHARS:
        cleaned = cleaned[:MAX_MODEL_CHARS].rstrip() + " [cut]"
    return cleaned or "(none given)"


def _tests(runs: Sequence[TestRun]) -> list[str]:
    if not runs:
        return ["- not run: the writer did not ask for a test run"]
    lines = []
    for n, run in enumerate(runs, 1):
        command = f"`{run.command}`: " if run.command else ""
        lines.append(f"- run {n}: {command}{run.line}")
    last = runs[-1]
    verdict = {True: "passing", False: "failing", None: "not run"}[last.passed]
    lines.append(f"\nTests at the last run: **{verdict}**.")
    return lines


def pull_body(
    *,
    issue: int,
    plan: str,
    notes: str,
    files: Sequence[ChangedFile],
    runs: Sequence[TestRun],
    cost_usd: float,
    role: str,
) -> str:
    """The body of the writer's draft pull request for ``issue``."""
    changed = [
        f"- `{inert(f.path)}` ({f.status}, +{f.additions} -{f.deletions})" for f in files
    ] or ["- (no file differs from the base)"]
    parts = [
        f"Closes #{issue}.",
        "### Plan",
        _model_text(plan),
        "### What changed",
        *changed,
        "### Tests",
        *_tests(runs),
        "### Notes",
        _model_text(notes),
        "---",
        (
            f"Opened as a draft by the swarm's `{role}` writer (about ${cost_usd:.2f} of model "
            "time). It never merges or approves; a person reviews this and decides."
        ),
    ]
    return "\n\n".join(parts)


# The fix rounds' part of the body is code's, after this marker (the model's text is made inert,
# so it can never hold one); the list of what is still open follows its own marker.
ROUNDS_MARK = "<!-- swarm:fix-rounds -->"
STOPPED_MARK = "<!-- swarm:fix-stopped -->"
MAX_LISTED_CHARS = 300


@dataclass(frozen=True)
class RoundLine:
    """One fix round as the body lists it: the head it answered, the commit it made (None:
    it changed nothing), how many findings it answered, and what it cost."""

    number: int
    head: str
    commit: str | None
    answered: int
    cost_usd: float
    turns: int

    def text(self) -> str:
        made = f"commit `{self.commit[:12]}`" if self.commit else "no commit (nothing changed)"
        return (
            f"- round {self.number} at `{self.head[:12]}`: {made}, {self.answered} finding(s) "
            f"answered; about ${self.cost_usd:.4f} and {self.turns} turn(s) of model time"
        )


def with_round(body: str, line: RoundLine) -> str:
    """``body`` with ``line`` in its fix rounds list (the line of the same head replaced, so a
    round written again is written once)."""
    head, marked, rest = body.partition(ROUNDS_MARK)
    lines: list[str] = []
    tail = ""
    if marked:
        rest, _, stopped = rest.partition(STOPPED_MARK)
        tail = f"\n\n{STOPPED_MARK}{stopped}" if stopped else ""
        lines = [ln for ln in rest.splitlines() if ln.startswith("- round ")]
    same = f" at `{line.head[:12]}`:"
    lines = [ln for ln in lines if same not in ln] + [line.text()]
    section = "\n".join(["### Fix rounds", "", *lines])
    return f"{head.rstrip()}\n\n{ROUNDS_MARK}\n{section}{tail}"


def with_still_open(body: str, findings: Sequence[OpenFinding], rounds: int) -> str:
    """``body`` with the list of what is still open after ``rounds`` rounds (once: a body that
    holds the list already is returned as it is)."""
    if STOPPED_MARK in body:
        return body
    listed = []
    for f in findings:
        words = " ".join(inert(redact(f.message)).split())
        if len(words) > MAX_LISTED_CHARS:
            words = words[:MAX_LISTED_CHARS].rstrip() + " [cut]"
        where = f"`{inert(f.path)}:{f.line}` " if f.path else ""
        who = f"requested by {f.by}" if f.person else f"**{f.severity}**"
        link = f" ({f.url})" if f.url else ""
        listed.append(f"- {who} {where}{words}{link}")
    said = f"### Still open after {rounds} round{'s' if rounds != 1 else ''}"
    text = "\n".join(
        [
            said,
            "",
            *listed,
            "",
            "The writer stops here: a person decides what happens to these.",
        ]
    )
    return f"{body.rstrip()}\n\n{STOPPED_MARK}\n{text}"
