"""The writer's working copy: a directory fetched by code that the model changes through tools.

Every path the model names is relative to the copy's root and checked twice: as text (no
``..``, no absolute or encoded traversal: :func:`agents.github.paths.repo_path`, the check the
commit makes too) and on the real filesystem, where no part of it may be a symbolic link (a
repository can hold a link to ``/etc`` or to the data directory; ``fetch_copy`` writes none, a
test run could make one) and what is read must be a regular file (a FIFO would block the read,
a device would never end). Files are opened with ``O_NOFOLLOW`` so a link swapped in after the
check is not followed either.

What changed is computed by code: the files the model wrote or deleted, compared with what the
fetch left (hashed when the copy was opened). Files a test run left behind (caches, reports)
are never part of it. Protected paths and caps (:mod:`agents.workspace.policy`) are checked at
each edit and again on the final change set.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from agents.github.errors import UnsafePath
from agents.github.paths import repo_path
from agents.workspace.policy import ChangePolicy, ChangeRefused
from agents.workspace.search import Hit, search

MAX_READ_BYTES = 1024 * 1024  # a larger file is not read (nor searched)
MAX_WRITE_BYTES = 256 * 1024  # one file the model writes
MAX_SEARCH_BYTES = 64 * 1024 * 1024  # all files one search reads
MAX_LISTED = 500
MAX_PATH_CHARS = 1024
_NO_FOLLOW = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class PathRefused(Exception):
    """A path outside the copy, through a link, or not a file the tools can use."""


@dataclass(frozen=True)
class Entry:
    name: str
    kind: str  # "dir", "file", "link" or "other"
    size: int


@dataclass(frozen=True)
class ChangeSet:
    """What the model changed since the fetch, as ``commit_on_branch`` takes it: ``additions``
    (path -> new text, for added and modified files) and ``deletions``."""

    additions: dict[str, str]
    deletions: tuple[str, ...]
    added: tuple[str, ...]

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(sorted([*self.additions, *self.deletions]))

    @property
    def bytes_changed(self) -> int:
        """The bytes of new text committed (a deletion adds none)."""
        return sum(len(text.encode()) for text in self.additions.values())

    def check(self, policy: ChangePolicy) -> None:
        """Raise :class:`ChangeRefused` naming every protected path and exceeded cap: a change
        set holding any of them is refused whole."""
        problems = [f"{p} ({r})" for p in self.paths if (r := policy.protection(p)) is not None]
        if problems:
            problems = ["protected paths changed: " + "; ".join(problems)]
        if len(self.paths) > policy.max_files:
            problems.append(f"{len(self.paths)} files changed, over the cap of {policy.max_files}")
        if self.bytes_changed > policy.max_bytes:
            problems.append(
                f"{self.bytes_changed} bytes changed, over the cap of {policy.max_bytes}"
            )
        if problems:
            raise ChangeRefused("the change set is refused: " + "; ".join(problems))


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Workspace:
    """One throwaway copy at ``root`` and the change policy its edits are held to."""

    def __init__(self, root: Path, policy: ChangePolicy | None = None) -> None:
        self.root = root.resolve(strict=True)
        if not self.root.is_dir():
            raise NotADirectoryError(f"{root} is not a directory")
        self.policy = policy or ChangePolicy()
        self._touched: set[str] = set()
        self._base = self._snapshot()

    # -- paths ---------------------------------------------------------------------------

    def _checked(self, path: str) -> str:
        if not path or len(path) > MAX_PATH_CHARS:
            raise PathRefused(f"a path of 1 to {MAX_PATH_CHARS} characters, got {len(path)}")
        try:
            repo_path(path)
        except UnsafePath as exc:
            raise PathRefused(str(exc)) from None
        return path

    def _locate(self, path: str, *, leaf_may_be_missing: bool) -> Path:
        """The real location of ``path`` under the root; no part of it may be a link."""
        here = self.root
        parts = self._checked(path).split("/")
        for index, part in enumerate(parts):
            here = here / part
            try:
                info = os.lstat(here)
            except FileNotFoundError:
                if index == len(parts) - 1 and leaf_may_be_missing:
                    break
                if leaf_may_be_missing:
                    break  # missing directories are made by the write, link-checked as made
                raise PathRefused(f"{path}: no such file or directory") from None
            if stat.S_ISLNK(info.st_mode):
                raise PathRefused(f"{path}: a symbolic link in the copy is never followed")
            if index < len(parts) - 1 and not stat.S_ISDIR(info.st_mode):
                raise PathRefused(f"{path}: {'/'.join(parts[: index + 1])} is not a directory")
        real = os.path.realpath(self.root / path)
        if real != str(self.root) and not real.startswith(str(self.root) + os.sep):
            raise PathRefused(f"{path}: outside the copy")
        return self.root / path

    def _read_bytes(self, where: Path, path: str, limit: int) -> bytes:
        try:
            fd = os.open(where, os.O_RDONLY | os.O_NONBLOCK | _NO_FOLLOW)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise PathRefused(
                    f"{path}: a symbolic link in the copy is never followed"
                ) from None
            raise PathRefused(f"{path}: cannot be read ({exc.strerror})") from None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise PathRefused(f"{path}: not a regular file")
            if info.st_nlink > 1:
                raise PathRefused(f"{path}: a hard link (its other name may be outside the copy)")
            if info.st_size > limit:
                raise PathRefused(f"{path}: {info.st_size} bytes, over the {limit}-byte cap")
            data = handle.read(limit + 1)
        if len(data) > limit:
            raise PathRefused(f"{path}: over the {limit}-byte cap")
        return data

    # -- reading -------------------------------------------------------------------------

    def read(self, path: str) -> str:
        """The text of ``path``; refused when it is not a UTF-8 regular file within the caps."""
        data = self._read_bytes(self._locate(path, leaf_may_be_missing=False), path, MAX_READ_BYTES)
        try:
            return data.decode()
        except UnicodeDecodeError:
            raise PathRefused(f"{path}: not UTF-8 text (a binary file)") from None

    def listing(self, path: str = "") -> tuple[list[Entry], bool]:
        """The entries of directory ``path`` ("" for the root), sorted, at most ``MAX_LISTED``;
        and whether more were left out. Links are listed, never followed."""
        where = self.root if path in ("", ".") else self._locate(path, leaf_may_be_missing=False)
        if not where.is_dir() or where.is_symlink():
            raise PathRefused(f"{path}: not a directory")
        entries: list[Entry] = []
        with os.scandir(where) as found:
            for item in sorted(found, key=lambda e: e.name):
                if len(entries) == MAX_LISTED:
                    return entries, True
                info = item.stat(follow_symlinks=False)
                mode = info.st_mode
                kind = (
                    "link"
                    if stat.S_ISLNK(mode)
                    else "dir"
                    if stat.S_ISDIR(mode)
                    else "file"
                    if stat.S_ISREG(mode)
                    else "other"
                )
                entries.append(Entry(item.name, kind, info.st_size if kind == "file" else 0))
        return entries, False

    def _snapshot(self) -> dict[str, str]:
        """Each regular file's digest as fetched, whatever its size (links and special files
        are not the repository's files here: the fetch writes none)."""
        digests: dict[str, str] = {}
        for directory, dirs, names in os.walk(self.root, followlinks=False):
            for name in names:
                where = Path(directory) / name
                if not stat.S_ISREG(os.lstat(where).st_mode):
                    continue
                hasher = hashlib.sha256()
                with open(where, "rb") as handle:
                    for block in iter(lambda: handle.read(1 << 20), b""):
                        hasher.update(block)
                digests[where.relative_to(self.root).as_posix()] = hasher.hexdigest()
            dirs[:] = [d for d in dirs if not (Path(directory) / d).is_symlink()]
        return digests

    def _files(self, budget: int, under: str = "") -> Iterator[tuple[str, bytes]]:
        """(path, bytes) of every regular file under ``under`` within the read cap, in path order,
        until ``budget`` bytes were read; links and special files are skipped, never followed."""
        start = self.root if not under else self._locate(under, leaf_may_be_missing=False)
        stack = [start]
        while stack:
            directory = stack.pop()
            with os.scandir(directory) as found:
                items = sorted(found, key=lambda e: e.name, reverse=True)
            for item in items:
                if item.is_symlink():
                    continue
                if item.is_dir(follow_symlinks=False):
                    stack.append(Path(item.path))
                    continue
                info = item.stat(follow_symlinks=False)
                if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_READ_BYTES:
                    continue
                if info.st_size > budget:
                    return
                relative = Path(item.path).relative_to(self.root).as_posix()
                try:
                    data = self._read_bytes(Path(item.path), relative, MAX_READ_BYTES)
                except PathRefused:
                    continue
                budget -= len(data)
                yield relative, data

    def search(
        self, query: str, under: str = "", *, ignore_case: bool = False
    ) -> tuple[list[Hit], bool]:
        """Lines holding ``query`` (a literal string) in the text files under ``under``."""

        def texts() -> Iterator[tuple[str, str]]:
            for path, data in self._files(MAX_SEARCH_BYTES, under):
                try:
                    yield path, data.decode()
                except UnicodeDecodeError:
                    continue

        return search(texts(), query, ignore_case=ignore_case)

    # -- editing -------------------------------------------------------------------------

    def _current(self, path: str) -> bytes | None:
        try:
            where = self._locate(path, leaf_may_be_missing=True)
            return self._read_bytes(where, path, MAX_SEARCH_BYTES)
        except PathRefused:
            return None

    def _check_edit(self, path: str, new: bytes | None) -> None:
        """Refuse an edit to a protected path, or one that would take the change set over a cap."""
        self._checked(path)
        self.policy.check_path(path)
        now = self.changes()
        sizes = {p: len(text.encode()) for p, text in now.additions.items()}
        changed = set(now.paths)
        sizes.pop(path, None)
        changed.add(path)
        if new is not None:
            sizes[path] = len(new)
        if new is None and path not in self._base:
            changed.discard(path)  # deleting a file the model added: back to nothing
        if len(changed) > self.policy.max_files:
            raise ChangeRefused(
                f"{path}: the change would touch {len(changed)} files, over the cap of "
                f"{self.policy.max_files}"
            )
        if sum(sizes.values()) > self.policy.max_bytes:
            raise ChangeRefused(
                f"{path}: the change would be {sum(sizes.values())} bytes, over the cap of "
                f"{self.policy.max_bytes}"
            )

    def write(self, path: str, text: str) -> None:
        """Create or replace file ``path`` with ``text``."""
        data = text.encode()
        if len(data) > MAX_WRITE_BYTES:
            raise PathRefused(f"{path}: {len(data)} bytes, over the {MAX_WRITE_BYTES}-byte cap")
        self._check_edit(path, data)
        where = self._locate(path, leaf_may_be_missing=True)
        parent = self.root
        for part in path.split("/")[:-1]:
            parent = parent / part
            with contextlib.suppress(FileExistsError):
                os.mkdir(parent, 0o755)
            if parent.is_symlink() or not parent.is_dir():
                raise PathRefused(f"{path}: {parent.relative_to(self.root)} is not a directory")
        try:
            fd = os.open(where, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | _NO_FOLLOW, 0o644)
        except OSError as exc:
            raise PathRefused(f"{path}: cannot be written ({exc.strerror})") from None
        with os.fdopen(fd, "wb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
                raise PathRefused(f"{path}: not a regular file of the copy alone")
            handle.truncate(0)  # only now: a hard link's other name is never emptied
            handle.write(data)
        self._touched.add(path)

    def replace(self, path: str, old: str, new: str) -> None:
        """Replace the one occurrence of ``old`` in ``path`` with ``new``; refused when ``old``
        occurs there no time or more than once (the model adds context until it is unique)."""
        if not old:
            raise PathRefused("the text to replace is empty")
        text = self.read(path)
        count = text.count(old)
        if count != 1:
            where = "does not occur" if count == 0 else f"occurs {count} times"
            raise PathRefused(f"{path}: the text to replace {where}; it must occur exactly once")
        self.write(path, text.replace(old, new, 1))

    def delete(self, path: str) -> None:
        """Delete file ``path``."""
        self._check_edit(path, None)
        where = self._locate(path, leaf_may_be_missing=False)
        if not stat.S_ISREG(os.lstat(where).st_mode):
            raise PathRefused(f"{path}: not a regular file")
        os.unlink(where)
        self._touched.add(path)

    # -- the change set ------------------------------------------------------------------

    def changes(self) -> ChangeSet:
        """What the model changed: each file it wrote or deleted, compared with the fetch."""
        additions: dict[str, str] = {}
        deletions: list[str] = []
        added: list[str] = []
        for path in sorted(self._touched):
            now, base = self._current(path), self._base.get(path)
            if now is None:
                if base is not None:
                    deletions.append(path)
            elif base is None or _digest(now) != base:
                additions[path] = now.decode(errors="replace")
                if base is None:
                    added.append(path)
        return ChangeSet(additions, tuple(deletions), tuple(added))

    def final_changes(self) -> ChangeSet:
        """The change set to commit, re-checked whole against the policy (defence in depth: an
        edit that slipped past a tool still refuses the commit)."""
        changes = self.changes()
        changes.check(self.policy)
        return changes
