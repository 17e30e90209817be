"""Where an inline review comment can sit: the lines of a pull request's diff hunks.

GitHub refuses a whole review (422) when one of its inline comments names a line outside the
diff, so every finding is placed against the PR's patches before posting: a finding that does
not anchor goes into the summary instead of costing the review, and a committable suggestion is
offered only where GitHub would apply it to exactly the finding's lines.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from agents.posting.findings import Finding
from agents.posting.render import Placement

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass(frozen=True)
class Anchors:
    """Per file, the old-side (LEFT) and new-side (RIGHT) line numbers a comment may name."""

    left: frozenset[int] = field(default_factory=frozenset)
    right: frozenset[int] = field(default_factory=frozenset)
    # RIGHT line -> the hunk it is in (from 0): a multi-line comment stays inside one hunk.
    hunk_of: Mapping[int, int] = field(default_factory=dict)

    def holds(self, line: int, side: str) -> bool:
        return line in (self.left if side == "LEFT" else self.right)

    def holds_range(self, first: int, last: int) -> bool:
        """Whether every line ``first``..``last`` is on the diff's right side, in one hunk:
        the lines a multi-line comment or a committable suggestion may cover."""
        hunk = self.hunk_of.get(first)
        return hunk is not None and all(
            self.hunk_of.get(line) == hunk for line in range(first, last + 1)
        )


def anchors_of(patch: str | None) -> Anchors:
    """The commentable lines of one file's unified-diff patch (none without a patch)."""
    left: set[int] = set()
    right: set[int] = set()
    hunk_of: dict[int, int] = {}
    old = new = 0
    hunk = -1
    for text in (patch or "").splitlines():
        header = _HUNK.match(text)
        if header:
            old, new = int(header[1]), int(header[2])
            hunk += 1
        elif hunk < 0 or text.startswith("\\"):
            continue  # before the first hunk, or "\ No newline at end of file"
        elif text.startswith("+"):
            right.add(new)
            hunk_of[new] = hunk
            new += 1
        elif text.startswith("-"):
            left.add(old)
            old += 1
        else:
            left.add(old)
            right.add(new)
            hunk_of[new] = hunk
            old += 1
            new += 1
    return Anchors(frozenset(left), frozenset(right), hunk_of)


def placement(finding: Finding, anchors: Anchors | None) -> Placement:
    """Where a finding can sit in the diff, checked against its file's patch before posting:

    - ``suggestion``: it has a replacement and every one of its lines is on the right side in
      one hunk, so GitHub can apply the replacement in one click;
    - ``range``: its lines all fit so, without a replacement: a comment on the whole range;
    - ``line``: only its last line fits: a comment on that line (a replacement is shown as a
      plain snippet, never as a suggestion that would replace other lines than the finding's);
    - ``outside``: not even that: it cannot be inline (it goes into the summary).
    """
    if anchors is None:
        return "outside"
    if anchors.holds_range(finding.first_line, finding.line):
        if finding.replacement is not None:
            return "suggestion"
        return "range" if finding.start_line is not None else "line"
    return "line" if anchors.holds(finding.line, "RIGHT") else "outside"


def placements(
    findings: Sequence[Finding], patches: Mapping[str, str | None]
) -> list[tuple[Finding, Placement]]:
    """Each finding with its :func:`placement` against ``patches`` (path -> patch)."""
    anchors = {path: anchors_of(patch) for path, patch in patches.items()}
    return [(f, placement(f, anchors.get(f.path))) for f in findings]
