"""A set of issues to implement, each with tests the writer never sees.

One YAML file per issue, in a folder per set (``sandbox/eval/implement/`` is the set this
repository ships; docs/eval.md describes the format). The sandbox GitHub serves each file as a
repository of its own holding ``files`` and a ``.github/swarm.yaml`` naming ``tests``, with the
issue filed against it; ``swarm eval --kind implement`` then adds ``hidden`` to the writer's pull
request head and runs ``tests`` there. The hidden files are never in the repository: the model
cannot read them, so passing them says the issue was resolved, not that the visible tests were
satisfied.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from agents.eval.labels import EvalSetError, load_named_file

CONFIG_PATH = ".github/swarm.yaml"


class ImplementCase(BaseModel):
    """One issue to implement: the repository, the issue, and the tests that judge the fix."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,79}$")
    title: str = Field(min_length=1)
    body: str = ""
    author: str = "dave-dev"
    # What the bug is, in a few words: for the person reading the results, never the model.
    bug: str = ""
    # The repository's test command (its .github/swarm.yaml): what the writer runs, and what
    # the evaluation runs with the hidden files added.
    tests: str = Field(min_length=1)
    timeout_seconds: int = Field(default=60, ge=1, le=600)
    files: dict[str, str] = Field(min_length=1)
    hidden: dict[str, str] = Field(min_length=1)
    notes: str = ""

    @field_validator("tests")
    @classmethod
    def _a_command_line(cls, value: str) -> str:
        try:
            if not shlex.split(value):
                raise ValueError("an empty command")
        except ValueError as exc:
            raise ValueError(f"not a command line: {exc}") from None
        return value

    @field_validator("files")
    @classmethod
    def _no_own_config(cls, value: dict[str, str]) -> dict[str, str]:
        if CONFIG_PATH in value:
            raise ValueError(f"{CONFIG_PATH} is made from `tests`; leave it out of `files`")
        return value

    @property
    def command(self) -> list[str]:
        return shlex.split(self.tests)

    def repository_files(self) -> dict[str, str]:
        """What the repository's default branch holds: the case's files and its test settings
        (the hidden files are not among them)."""
        settings = {"tests": {"command": self.tests, "timeout_seconds": self.timeout_seconds}}
        config = "# swarm's settings for this repository (read from the default branch only)\n"
        config += yaml.safe_dump(settings, sort_keys=False)
        return {**self.files, CONFIG_PATH: config}


def load_case(path: Path) -> ImplementCase:
    case = load_named_file(path, ImplementCase, "a case file")
    shown = sorted(set(case.hidden) & set(case.repository_files()))
    if shown:
        raise EvalSetError(f"{path}: hidden file {shown[0]} is also in the repository")
    return case


def load_cases(folder: Path) -> list[ImplementCase]:
    """Every case of the set in ``folder``, by id."""
    if not folder.is_dir():
        raise EvalSetError(f"{folder}: no such set folder")
    cases = [load_case(p) for p in sorted(folder.glob("*.yaml"))]
    if not cases:
        raise EvalSetError(f"{folder}: no .yaml files")
    return cases
