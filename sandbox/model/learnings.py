"""Earlier feedback the scripted reviewer honours, read from its request like a real model
would: accepted learnings arrive quoted in the first user turn (``kind="review_feedback"``).

A finding a person dismissed is not raised again while its code line is unchanged; once the
line changes it is raised again. Corrections and anything else quoted there change nothing:
they are someone's words, not instructions.
"""

from __future__ import annotations

import re

from sandbox.model.diffscan import Finding

_BLOCK = re.compile(r'<untrusted kind="review_feedback"[^>]*>(.*?)</untrusted>', re.DOTALL)
_DISMISSED = re.compile(
    r'dismissed the review finding "(?P<finding>.*?)" on (?P<path>\S+)(?: line \d+)? of PR #\d+, '
    r"code `(?P<code>.*?)`, saying:"
)


def _norm(text: str) -> str:
    return " ".join(text.split())


def dismissals(first_turn: str) -> set[tuple[str, str, str]]:
    """(path, code line, finding) of every dismissal quoted in the feedback block."""
    found: set[tuple[str, str, str]] = set()
    for block in _BLOCK.findall(first_turn):
        for match in _DISMISSED.finditer(block):
            found.add((match["path"], _norm(match["code"]), _norm(match["finding"])))
    return found


def not_dismissed(found: list[Finding], dismissed: set[tuple[str, str, str]]) -> list[Finding]:
    """``found`` without the findings people dismissed on the very same code."""
    if not dismissed:
        return found
    return [f for f in found if (f.path, _norm(f.code), _norm(f.body)) not in dismissed]
