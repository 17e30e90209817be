"""A labelled set of pull requests: the files of each PR and the findings a reviewer should make.

One YAML file per pull request, in a folder per set (``sandbox/eval/default/`` is the set this
repository ships; docs/eval.md describes the format). The sandbox GitHub serves each file as a
pull request of its own repository; ``swarm eval`` scores the review's findings against the
file's ``findings``, its labels. A label with a path and lines is matched by place; one without
(an imported golden comment) only by the judge.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agents.errors import SwarmError
from agents.posting.findings import Category, Severity

# A set file bigger than this is not a small pull request (the wide and long cases are ~100 KB).
MAX_FILE_BYTES = 2_000_000


FileT = TypeVar("FileT", bound="BaseModel")


class EvalSetError(SwarmError):
    """A set that cannot be read: which file, and what is wrong with it."""


class Label(BaseModel):
    """One problem the PR has: where, what kind, how severe, and what a good reviewer says."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str | None = Field(default=None, min_length=1)
    lines: tuple[int, int] | None = None
    # A piece of the first flagged line: the set's own test checks it is there, so line
    # numbers cannot drift away from the code they point at.
    anchor: str | None = None
    category: Category | None = None
    severity: Severity
    comment: str = Field(min_length=1, description="the golden comment, one sentence")

    @model_validator(mode="after")
    def _placed_together(self) -> Label:
        if (self.path is None) != (self.lines is None):
            raise ValueError("path and lines go together")
        if self.lines is not None and not 1 <= self.lines[0] <= self.lines[1]:
            raise ValueError("lines are [first, last], first >= 1")
        return self

    @property
    def placed(self) -> bool:
        return self.path is not None and self.lines is not None


class ChangedFile(BaseModel):
    """A file at the PR's base and head: ``None`` where it does not exist (added, deleted)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base: str | None = None
    head: str | None = None


class EvalPull(BaseModel):
    """One labelled pull request."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,79}$")
    title: str = Field(min_length=1)
    body: str = ""
    author: str = "eval-contributor"
    language: str
    files: dict[str, ChangedFile] = Field(min_length=1)
    findings: list[Label] = Field(default_factory=list)
    notes: str = ""
    # Where an imported PR came from (its URL); the shipped set is written here.
    source: str | None = None

    @property
    def clean(self) -> bool:
        """A PR where the right answer is no finding."""
        return not self.findings


def load_named_file(path: Path, model: type[FileT], what: str) -> FileT:
    """``path``'s YAML as ``model``, its ``id`` defaulting to the file's name and required to
    be it; any problem is one :class:`EvalSetError` line naming the file (``what`` says what
    kind of file it should have been: "a set file", "a case file")."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise EvalSetError(f"{path}: larger than {MAX_FILE_BYTES:,} bytes")
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise EvalSetError(f"{path}: cannot read it: {exc}") from None
    if not isinstance(raw, dict):
        raise EvalSetError(f"{path}: {what} is a mapping")
    raw.setdefault("id", path.stem)
    try:
        loaded = model.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise EvalSetError(f"{path}: {where}: {first['msg']}") from None
    named = getattr(loaded, "id", None)  # every such model has an ``id``: the file's name
    if named != path.stem:
        raise EvalSetError(f"{path}: id {named!r} must be the file's name")
    return loaded


def load_pull(path: Path) -> EvalPull:
    return load_named_file(path, EvalPull, "a set file")


def load_set(folder: Path) -> list[EvalPull]:
    """Every PR of the set in ``folder``, by id."""
    if not folder.is_dir():
        raise EvalSetError(f"{folder}: no such set folder")
    pulls = [load_pull(p) for p in sorted(folder.glob("*.yaml"))]
    if not pulls:
        raise EvalSetError(f"{folder}: no .yaml files")
    return pulls


def label_problems(pull: EvalPull) -> Iterator[str]:
    """What is wrong with a PR's labels against its own files: a path it does not change,
    lines past the end of the head file, an anchor that is not on the first flagged line."""
    for n, label in enumerate(pull.findings):
        if not label.placed:
            continue
        assert label.path is not None and label.lines is not None
        where = f"{pull.id}: findings[{n}]"
        changed = pull.files.get(label.path)
        if changed is None or changed.head is None:
            yield f"{where}: {label.path} is not a file at the PR's head"
            continue
        lines = changed.head.splitlines()
        if label.lines[1] > len(lines):
            yield f"{where}: line {label.lines[1]} is past the end ({len(lines)} lines)"
        elif label.anchor and label.anchor not in lines[label.lines[0] - 1]:
            yield f"{where}: {label.anchor!r} is not on line {label.lines[0]}"
