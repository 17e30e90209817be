"""A finding: one problem a reviewer reports, as structured data the product renders.

The model reports findings through a tool with this schema and never writes GitHub markup for
them: the product decides how a finding looks (inline comment, committable suggestion, a line in
the summary) and whether it is posted at all (severity threshold, comment cap, already posted).
The same shape is what ``swarm eval`` scores against its labels.
"""

from __future__ import annotations

import hashlib
import re
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agents.redact import redact

Severity = Literal["critical", "major", "minor", "nit"]
Category = Literal["bug", "security", "performance", "maintainability", "tests", "style"]
SEVERITIES: tuple[Severity, ...] = get_args(Severity)  # most severe first
CATEGORIES: tuple[Category, ...] = get_args(Category)

MESSAGE_MAX = 4000
REPLACEMENT_MAX = 20_000


def severity_rank(severity: Severity) -> int:
    """0 for ``critical`` up to 3 for ``nit``: lower is more severe."""
    return SEVERITIES.index(severity)


def at_least(severity: Severity, threshold: Severity) -> bool:
    """Whether ``severity`` is ``threshold`` or more severe."""
    return severity_rank(severity) <= severity_rank(threshold)


class Finding(BaseModel):
    """One problem on lines ``start_line``..``line`` of ``path`` at the PR's head (the diff's
    right side), with an optional replacement for exactly those lines."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    path: str = Field(min_length=1, max_length=500, description="file path in the repository")
    line: int = Field(ge=1, description="last line of the finding, in the head version")
    start_line: int | None = Field(
        default=None, ge=1, description="first line, when the finding spans several lines"
    )
    severity: Severity
    category: Category
    message: str = Field(min_length=1, max_length=MESSAGE_MAX, description="plain text")
    replacement: str | None = Field(
        default=None,
        max_length=REPLACEMENT_MAX,
        description="the new text for lines start_line..line exactly (a committable suggestion)",
    )

    @field_validator("replacement")
    @classmethod
    def _lines_not_terminated(cls, value: str | None) -> str | None:
        # "a\n" and "a" both replace the lines with one line "a": one spelling of it.
        return value[:-1] if value is not None and value.endswith("\n") else value

    @model_validator(mode="after")
    def _ordered(self) -> Finding:
        if self.start_line is not None and self.start_line > self.line:
            raise ValueError("start_line must not be after line")
        return self

    @property
    def first_line(self) -> int:
        return self.start_line if self.start_line is not None else self.line

    @property
    def lines(self) -> tuple[int, int]:
        """(first, last) line of the finding."""
        return self.first_line, self.line

    def at(self, path: str, lines: tuple[int, int]) -> Finding:
        """The same finding on other lines (where its lines moved to)."""
        first, last = lines
        return self.model_copy(
            update={"path": path, "line": last, "start_line": first if first != last else None}
        )


_WORDS = re.compile(r"[a-z0-9]+")


def normalised_message(message: str) -> str:
    """The message as words only, lowercased, as it would be posted (redacted): the same finding
    worded with other punctuation, case or spacing is the same finding, and so is one that quotes
    a secret beside one that quotes it already redacted (both post the same text)."""
    return " ".join(_WORDS.findall(redact(message).lower()))


def finding_key(finding: Finding, *, lines: tuple[int, int] | None = None) -> str:
    """A stable key of a finding: path, lines, category and the normalised message.

    ``lines`` overrides the finding's own lines, for a finding whose lines moved through the
    diff (the key then names where the lines are now)."""
    first, last = lines if lines is not None else (finding.first_line, finding.line)
    text = "\0".join(
        [finding.path, str(first), str(last), finding.category, normalised_message(finding.message)]
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def finding_identity(finding: Finding) -> str:
    """What a finding is, wherever its lines are: path, category and the normalised message.
    Two findings of one identity on lines that moved into each other are the same finding."""
    text = "\0".join([finding.path, finding.category, normalised_message(finding.message)])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]
