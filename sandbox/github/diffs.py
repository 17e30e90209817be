"""Unified-diff patches as GitHub serves them, and where a review comment may land."""

from __future__ import annotations

import difflib
import re
from typing import Literal

from sandbox.github.model import PullFile, sha_of

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def file_patch(old: str, new: str) -> tuple[str, int, int]:
    """GitHub's ``patch`` field: the hunks only, no ``---``/``+++`` header lines."""
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=3))[2:]
    additions = sum(1 for ln in lines if ln.startswith("+"))
    deletions = sum(1 for ln in lines if ln.startswith("-"))
    return "\n".join(lines), additions, deletions


def tree_diff(base: dict[str, str], head: dict[str, str]) -> list[PullFile]:
    """Changed files between two trees, sorted by path like GitHub's file list."""
    files: list[PullFile] = []
    for path in sorted(set(base) | set(head)):
        old, new = base.get(path), head.get(path)
        if old == new:
            continue
        patch, adds, dels = file_patch(old or "", new or "")
        status: Literal["added", "removed", "modified"] = (
            "added" if old is None else "removed" if new is None else "modified"
        )
        files.append(
            PullFile(
                filename=path,
                status=status,
                additions=adds,
                deletions=dels,
                patch=patch,
                sha=sha_of("blob", new if new is not None else ""),
            )
        )
    return files


def commentable_lines(patch: str) -> tuple[set[int], set[int]]:
    """Line numbers a review comment may target: (LEFT = old side, RIGHT = new side)."""
    left: set[int] = set()
    right: set[int] = set()
    old_no = new_no = 0
    for line in patch.splitlines():
        match = _HUNK.match(line)
        if match:
            old_no, new_no = int(match.group(1)), int(match.group(3))
            continue
        if line.startswith("+"):
            right.add(new_no)
            new_no += 1
        elif line.startswith("-"):
            left.add(old_no)
            old_no += 1
        else:
            left.add(old_no)
            right.add(new_no)
            old_no += 1
            new_no += 1
    return left, right


def hunk_index(patch: str, line: int, side: str) -> int | None:
    """Which hunk (from 0) holds ``line`` on ``side``; None when no hunk does. GitHub keeps a
    multi-line comment inside one hunk."""
    old_no = new_no = 0
    hunk = -1
    for text in patch.splitlines():
        match = _HUNK.match(text)
        if match:
            old_no, new_no = int(match.group(1)), int(match.group(3))
            hunk += 1
            continue
        if hunk < 0 or text.startswith("\\"):
            continue
        if text.startswith("+"):
            if side == "RIGHT" and new_no == line:
                return hunk
            new_no += 1
        elif text.startswith("-"):
            if side == "LEFT" and old_no == line:
                return hunk
            old_no += 1
        else:
            if (new_no if side == "RIGHT" else old_no) == line:
                return hunk
            old_no += 1
            new_no += 1
    return None


def position_count(patch: str) -> int:
    """Highest valid ``position``: lines after the first hunk header."""
    return max(0, len(patch.splitlines()) - 1)


def hunk_for(patch: str, line: int | None, side: str, position: int | None) -> str:
    """The ``diff_hunk`` GitHub stores with a comment: the patch up to the commented line."""
    lines = patch.splitlines()
    if position is not None:
        return "\n".join(lines[: position + 1])
    old_no = new_no = 0
    for idx, text in enumerate(lines):
        match = _HUNK.match(text)
        if match:
            old_no, new_no = int(match.group(1)), int(match.group(3))
            continue
        here_old, here_new = old_no, new_no
        if text.startswith("+"):
            new_no += 1
            hit = side == "RIGHT" and here_new == line
        elif text.startswith("-"):
            old_no += 1
            hit = side == "LEFT" and here_old == line
        else:
            old_no += 1
            new_no += 1
            hit = (here_new if side == "RIGHT" else here_old) == line
        if hit:
            return "\n".join(lines[: idx + 1])
    return patch
