"""The scripted judge of ``swarm eval``: whether a finding names a golden comment's problem.

A deterministic stand-in for the judge model: the two texts name the same problem when they
share enough of their content words (identifiers and words of four letters or more, with common
words left out). It answers in the JSON the judge prompt asks for.
"""

from __future__ import annotations

import json
import re

_BLOCK = re.compile(r'<untrusted kind="(golden_comment|finding)"[^>]*>(.*?)</untrusted>', re.DOTALL)
_WORD = re.compile(r"[a-z_][a-z0-9_.]{3,}")
_COMMON = frozenset(
    [
        "this",
        "that",
        "with",
        "from",
        "into",
        "when",
        "what",
        "which",
        "their",
        "there",
        "them",
        "they",
        "have",
        "been",
        "does",
        "should",
        "would",
        "could",
        "every",
        "other",
        "only",
        "than",
        "then",
        "also",
        "just",
        "make",
        "made",
        "uses",
        "used",
        "using",
        "instead",
        "code",
        "line",
        "lines",
        "file",
        "files",
        "function",
        "value",
        "values",
        "call",
        "calls",
    ]
)
SAME_AT = 0.2


def words(text: str) -> set[str]:
    return {w.strip("._") for w in _WORD.findall(text.lower())} - _COMMON


def verdict(text: str) -> str:
    """The judge's answer to a request whose text quotes both comments."""
    parts = dict((kind, body) for kind, body in _BLOCK.findall(text))
    golden, finding = words(parts.get("golden_comment", "")), words(parts.get("finding", ""))
    shared = golden & finding
    overlap = len(shared) / max(1, min(len(golden), len(finding)))
    same = overlap >= SAME_AT
    reason = f"shares {', '.join(sorted(shared)[:5])}" if same else "no problem named in common"
    return json.dumps({"same_issue": same, "reason": reason})
