"""Where an inline review comment can sit: the lines of a pull request's diff hunks.

GitHub refuses a whole review (422) when one of its inline comments names a line outside the
diff, so comments are checked against the PR's patches before posting; a comment that does not
anchor moves into the review body instead of costing the review.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass(frozen=True)
class Anchors:
    """Per file, the old-side (LEFT) and new-side (RIGHT) line numbers a comment may name."""

    left: frozenset[int] = field(default_factory=frozenset)
    right: frozenset[int] = field(default_factory=frozenset)

    def holds(self, line: int, side: str) -> bool:
        return line in (self.left if side == "LEFT" else self.right)


def anchors_of(patch: str | None) -> Anchors:
    """The commentable lines of one file's unified-diff patch (none without a patch)."""
    left: set[int] = set()
    right: set[int] = set()
    old = new = 0
    in_hunk = False
    for text in (patch or "").splitlines():
        header = _HUNK.match(text)
        if header:
            old, new, in_hunk = int(header[1]), int(header[2]), True
        elif not in_hunk or text.startswith("\\"):
            continue  # before the first hunk, or "\ No newline at end of file"
        elif text.startswith("+"):
            right.add(new)
            new += 1
        elif text.startswith("-"):
            left.add(old)
            old += 1
        else:
            left.add(old)
            right.add(new)
            old += 1
            new += 1
    return Anchors(frozenset(left), frozenset(right))


def split_anchored(
    comments: Sequence[Mapping[str, Any]], patches: Mapping[str, str | None]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(comments GitHub can place, comments it cannot) against ``patches`` (path -> patch)."""
    anchors = {path: anchors_of(patch) for path, patch in patches.items()}
    placed: list[dict[str, Any]] = []
    loose: list[dict[str, Any]] = []
    for comment in comments:
        found = anchors.get(str(comment.get("path")))
        line = comment.get("line")
        side = str(comment.get("side") or "RIGHT")
        fits = found is not None and isinstance(line, int) and found.holds(line, side)
        (placed if fits else loose).append(dict(comment))
    return placed, loose


def with_loose_comments(body: str, loose: Sequence[Mapping[str, Any]]) -> str:
    """The review body with the comments that could not be placed inline appended to it."""
    if not loose:
        return body
    lines = [f"- `{c.get('path')}` line {c.get('line')}: {c.get('body')}" for c in loose]
    return f"{body.rstrip()}\n\nComments outside the diff:\n" + "\n".join(lines)
