"""The few payload fields the swarm reads, as typed models that ignore everything else.

githubkit's webhook models require every field GitHub sends and cost about a second to build per
event type on first use; we read about ten fields, and a trimmed or older payload (GitHub
Enterprise) must still route. Every string here comes from the sender and is untrusted.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from agents.github.models import Pull

# An issue or PR number is a 32-bit integer on GitHub and in the store's columns.
Number = Annotated[int, Field(gt=0, le=2**31 - 1)]
_NUMBER: TypeAdapter[int] = TypeAdapter(Number)
# The head commit a review is keyed by: a hex SHA, abbreviated or whole (SHA-1 or SHA-256).
_SHA = re.compile(r"[0-9a-f]{7,64}")


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class Account(_Loose):
    login: str
    type: str = "User"

    @property
    def is_bot(self) -> bool:
        return self.type == "Bot" or self.login.endswith("[bot]")


class Repository(_Loose):
    full_name: str = Field(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


class Installation(_Loose):
    id: int


class IssuePullLink(_Loose):
    url: str | None = None


class Issue(_Loose):
    number: Number
    user: Account | None = None
    # Present (even with null fields) when the issue is a pull request.
    pull_request: IssuePullLink | None = None


class Comment(_Loose):
    id: int
    body: str = ""
    user: Account


class ReviewComment(Comment):
    in_reply_to_id: int | None = None


class PullNumber(_Loose):
    number: Number


class Envelope(_Loose):
    """What every event we act on has: an action, a repository, a sender."""

    action: str | None = None
    repository: Repository | None = None
    sender: Account | None = None
    installation: Installation | None = None


class PullRequestEvent(Envelope):
    """``pull_request`` is the swarm's one pull request shape (GitHub's field names; the fields
    it does not name are dropped), checked here for what routing reads of it: its number, and
    a head SHA that is there and hex."""

    pull_request: Pull

    @field_validator("pull_request")
    @classmethod
    def _routable(cls, pull: Pull) -> Pull:
        try:
            _NUMBER.validate_python(pull.get("number"))
        except ValidationError as exc:
            raise ValueError(f"pull_request.number: {exc.errors()[0]['msg']}") from None
        sha = (pull.get("head") or {}).get("sha")
        if not isinstance(sha, str) or _SHA.fullmatch(sha) is None:
            raise ValueError("pull_request.head.sha: not a commit SHA")
        checked = pull.copy()
        checked.setdefault("draft", False)
        return checked


class IssueCommentEvent(Envelope):
    issue: Issue
    comment: Comment


class IssuesEvent(Envelope):
    issue: Issue


class ReviewThreadEvent(Envelope):
    pull_request: PullNumber


class ReviewCommentEvent(Envelope):
    pull_request: PullNumber
    comment: ReviewComment
