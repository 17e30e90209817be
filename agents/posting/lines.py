"""Following a finding's lines from the commit it was posted at to a later head, through the diff.

After a push, a finding posted at the old head either sits on lines the push left alone (they may
have moved: lines added above shift them) or on lines the push changed or removed. The first is
the same finding at its new place, so it is not posted again and its thread stays open; the
second is a finding whose code changed, so its thread may be resolved when the re-review no
longer reports it. Both are read from the unified-diff patch of each file between the two commits
(``GET /repos/{o}/{r}/compare/{old}...{new}``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class Hunk:
    """One hunk: old-side lines ``old_start``.. (``old_count`` of them) replaced by new-side
    lines ``new_start``.. (``new_count``); a count of 0 means the hunk only adds or removes, and
    its start then names the line it follows."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    # Old-side lines the hunk removes or changes (context lines are not among them).
    touched: frozenset[int] = field(default_factory=frozenset)
    # Old-side context line -> its new-side number (inside the hunk).
    kept: Mapping[int, int] = field(default_factory=dict)

    def holds(self, old_line: int) -> bool:
        return self.old_start <= old_line < self.old_start + self.old_count

    @property
    def shift(self) -> int:
        """How far the lines after this hunk moved."""
        old_next = self.old_start + (self.old_count or 1)
        new_next = self.new_start + (self.new_count or 1)
        return new_next - old_next

    @property
    def span(self) -> tuple[int, int]:
        """The new-side lines that stand where the hunk's old lines stood."""
        if not self.new_count:
            return max(self.new_start, 1), max(self.new_start, 1)
        return self.new_start, self.new_start + self.new_count - 1


@dataclass(frozen=True)
class LineMap:
    """How the lines of one file moved between two commits.

    ``gone``: the file was removed. ``known`` is False for a file GitHub changed without a patch
    (binary, or too large): its lines are guessed to stay where they were, and it never counts
    as changed, so no thread is resolved on a guess."""

    hunks: tuple[Hunk, ...] = ()
    gone: bool = False
    known: bool = True
    new_path: str | None = None  # set when the file was renamed

    def follow(self, first: int, last: int) -> tuple[int, int] | None:
        """Where lines ``first``..``last`` are now, or None when any of them changed or left."""
        if self.gone:
            return None
        if any(self._touched(line) for line in range(first, last + 1)):
            return None
        return self._line(first), self._line(last)

    def changed(self, first: int, last: int) -> bool:
        """Whether the push changed or removed any of lines ``first``..``last`` (known only)."""
        return self.known and self.follow(first, last) is None

    def region(self, first: int, last: int) -> tuple[int, int]:
        """The new-side lines standing where ``first``..``last`` stood: the spans of the hunks
        that touched them, joined with wherever the untouched ones went."""
        lows: list[int] = []
        highs: list[int] = []
        for line in range(first, last + 1):
            hunk = self._hunk_of(line)
            if hunk is not None and line in hunk.touched:
                low, high = hunk.span
            else:
                low = high = self._line(line)
            lows.append(low)
            highs.append(high)
        return min(lows), max(highs)

    def _hunk_of(self, line: int) -> Hunk | None:
        return next((h for h in self.hunks if h.holds(line)), None)

    def _touched(self, line: int) -> bool:
        hunk = self._hunk_of(line)
        return hunk is not None and line in hunk.touched

    def _line(self, line: int) -> int:
        """The new number of an old line that no hunk touched."""
        shift = 0
        for hunk in self.hunks:
            if hunk.holds(line):
                return hunk.kept.get(line, line + shift)
            if line < hunk.old_start + (0 if hunk.old_count else 1):
                break
            shift = hunk.shift
        return line + shift


def line_map(patch: str | None) -> LineMap:
    """The :class:`LineMap` of one file's unified-diff patch (none: nothing moved)."""
    hunks: list[Hunk] = []
    header: re.Match[str] | None = None
    touched: set[int] = set()
    kept: dict[int, int] = {}
    old = new = 0

    def close() -> None:
        if header is None:
            return
        old_count = int(header[2]) if header[2] is not None else 1
        new_count = int(header[4]) if header[4] is not None else 1
        hunks.append(
            Hunk(int(header[1]), old_count, int(header[3]), new_count, frozenset(touched), kept)
        )

    for text in (patch or "").splitlines():
        found = _HUNK.match(text)
        if found:
            close()
            header, touched, kept = found, set(), {}
            old, new = int(found[1]), int(found[3])
        elif header is None or text.startswith("\\"):
            continue
        elif text.startswith("-"):
            touched.add(old)
            old += 1
        elif text.startswith("+"):
            new += 1
        else:
            kept[old] = new
            old += 1
            new += 1
    close()
    return LineMap(tuple(hunks))


@dataclass(frozen=True)
class Moves:
    """Every changed file's :class:`LineMap` between two commits; a file not listed is unchanged."""

    files: Mapping[str, LineMap] = field(default_factory=dict)

    def of(self, path: str) -> LineMap:
        return self.files.get(path, LineMap())


def moves_of(files: Iterable[Mapping[str, object]]) -> Moves:
    """:class:`Moves` from the ``files`` of a compare answer (filename, status, patch,
    previous_filename)."""
    found: dict[str, LineMap] = {}
    for entry in files:
        status = str(entry.get("status") or "modified")
        patch = entry.get("patch")
        name = str(entry.get("filename") or "")
        before = str(entry.get("previous_filename") or name)
        if status == "removed":
            found[name] = LineMap(gone=True)
        elif status == "renamed":
            mapped = line_map(patch if isinstance(patch, str) else None)
            found[before] = LineMap(mapped.hunks, known=mapped.known, new_path=name)
        elif status != "added":
            found[name] = line_map(patch) if isinstance(patch, str) else LineMap(known=False)
    return Moves(found)
