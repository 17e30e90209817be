"""Unified-diff patches as GitHub serves them, and where a review comment may land."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Mapping
from typing import Literal

from sandbox.github.model import Blob, PullFile, sha_of

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


# GitHub's diff limits (docs: "Repository limits"): one file's diff may hold at most 20,000
# lines or 500 KB; past either the file is listed with its counts and no patch.
FILE_PATCH_LINES = 20_000
FILE_PATCH_BYTES = 500 * 1024
# Git calls a file binary when a NUL byte shows in its first 8,000 bytes.
_BINARY_PROBE = 8000
# Git's default rename threshold: at least half of the content is kept.
RENAME_SIMILARITY = 0.5
# Pairs compared for inexact renames before only files of the same name are (git has a limit too).
RENAME_PAIRS = 4000


def is_binary(blob: Blob | None) -> bool:
    return isinstance(blob, bytes) and b"\0" in blob[:_BINARY_PROBE]


def as_text(blob: Blob | None) -> str:
    """A blob as the text its diff shows: UTF-8, or Latin-1 for other bytes (every byte is
    a character there, so nothing is lost or refused)."""
    if blob is None:
        return ""
    if isinstance(blob, str):
        return blob
    try:
        return blob.decode("utf-8")
    except UnicodeDecodeError:
        return blob.decode("latin-1")


def file_patch(old: Blob | None, new: Blob | None) -> tuple[str | None, int, int]:
    """GitHub's ``patch`` field (the hunks only, no ``---``/``+++`` lines) and the line counts;
    the patch is None for a binary file and for a diff past GitHub's per-file limits."""
    if is_binary(old) or is_binary(new):
        return None, 0, 0
    lines = list(
        difflib.unified_diff(as_text(old).splitlines(), as_text(new).splitlines(), lineterm="", n=3)
    )[2:]
    additions = sum(1 for ln in lines if ln.startswith("+"))
    deletions = sum(1 for ln in lines if ln.startswith("-"))
    patch = "\n".join(lines)
    if len(lines) > FILE_PATCH_LINES or len(patch.encode()) > FILE_PATCH_BYTES:
        return None, additions, deletions
    return patch, additions, deletions


def _similarity(old: Blob, new: Blob) -> float:
    if old == new:
        return 1.0
    if is_binary(old) or is_binary(new):
        return 0.0
    a, b = as_text(old).splitlines(), as_text(new).splitlines()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if matcher.real_quick_ratio() < RENAME_SIMILARITY or matcher.quick_ratio() < RENAME_SIMILARITY:
        return 0.0
    return matcher.ratio()


def _renames(base: Mapping[str, Blob], head: Mapping[str, Blob]) -> dict[str, str]:
    """new path -> old path for the files git would call renamed: the same content under a new
    name, or at least half of it kept."""
    gone = [p for p in base if p not in head]
    new = [p for p in head if p not in base]
    found: dict[str, str] = {}
    by_blob: dict[Blob, list[str]] = {}
    for path in gone:
        by_blob.setdefault(base[path], []).append(path)
    for path in new:
        same = by_blob.get(head[path])
        if same:
            # Of several files with this content, the one of the same name is the one moved.
            name = path.rsplit("/", 1)[-1]
            pick = next((p for p in same if p.rsplit("/", 1)[-1] == name), same[0])
            found[path] = pick
            same.remove(pick)
    left = [p for p in gone if p not in set(found.values())]
    added = [p for p in new if p not in found]
    # Like git, every pair is compared while there are few; past that only files of one name.
    every_pair = len(left) * len(added) <= RENAME_PAIRS
    for path in added:
        name = path.rsplit("/", 1)[-1]
        candidates = [old for old in left if every_pair or old.rsplit("/", 1)[-1] == name]
        scored = [(_similarity(base[old], head[path]), old) for old in candidates]
        best = max(scored, default=(0.0, ""))
        if best[0] >= RENAME_SIMILARITY:
            found[path] = best[1]
            left.remove(best[1])
    return found


def tree_diff(base: Mapping[str, Blob], head: Mapping[str, Blob]) -> list[PullFile]:
    """Changed files between two trees, sorted by path like GitHub's file list; renames as one
    entry with ``previous_filename``."""
    renames = _renames(base, head)
    moved = set(renames.values())
    files: list[PullFile] = []
    for path in sorted((set(base) | set(head)) - moved):
        old = base.get(renames.get(path, path))
        new = head.get(path)
        if old == new and path not in renames:
            continue
        status: Literal["added", "removed", "modified", "renamed"] = (
            "renamed"
            if path in renames
            else "added"
            if old is None
            else "removed"
            if new is None
            else "modified"
        )
        patch, adds, dels = file_patch(old, new)
        files.append(
            PullFile(
                filename=path,
                status=status,
                additions=adds,
                deletions=dels,
                # A pure rename has no patch at all, as GitHub lists it.
                patch=None if status == "renamed" and not patch else patch,
                sha=sha_of("blob", as_text(new) if new is not None else ""),
                previous_filename=renames.get(path),
            )
        )
    return files


def _diff_lines(patch: str | None) -> Iterator[tuple[int, str, int]]:
    """Each line of ``patch`` a review comment may sit on, as (its hunk from 0, its side, its
    number on that side); a context line once per side."""
    old_no = new_no = 0
    hunk = -1
    for text in (patch or "").splitlines():
        match = _HUNK.match(text)
        if match:
            old_no, new_no = int(match.group(1)), int(match.group(3))
            hunk += 1
        elif hunk < 0 or text.startswith("\\"):
            continue  # before the first hunk, or "\ No newline at end of file": no line
        elif text.startswith("+"):
            yield hunk, "RIGHT", new_no
            new_no += 1
        elif text.startswith("-"):
            yield hunk, "LEFT", old_no
            old_no += 1
        else:
            yield hunk, "LEFT", old_no
            yield hunk, "RIGHT", new_no
            old_no += 1
            new_no += 1


def commentable_lines(patch: str | None) -> tuple[set[int], set[int]]:
    """Line numbers a review comment may target: (LEFT = old side, RIGHT = new side); none in a
    file GitHub shows no patch for."""
    left: set[int] = set()
    right: set[int] = set()
    for _hunk, side, number in _diff_lines(patch):
        (left if side == "LEFT" else right).add(number)
    return left, right


def hunk_index(patch: str | None, line: int, side: str) -> int | None:
    """Which hunk (from 0) holds ``line`` on ``side``; None when no hunk does. GitHub keeps a
    multi-line comment inside one hunk."""
    return next((h for h, on, number in _diff_lines(patch) if (on, number) == (side, line)), None)


def position_count(patch: str | None) -> int:
    """Highest valid ``position``: lines after the first hunk header."""
    return max(0, len((patch or "").splitlines()) - 1)


def hunk_for(patch: str | None, line: int | None, side: str, position: int | None) -> str:
    """The ``diff_hunk`` GitHub stores with a comment: the patch up to the commented line."""
    patch = patch or ""
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
