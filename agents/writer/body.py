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
