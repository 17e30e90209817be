"""The few payload fields the swarm reads, as typed models that ignore everything else.

githubkit's webhook models require every field GitHub sends and cost about a second to build per
event type on first use; we read about ten fields, and a trimmed or older payload (GitHub
Enterprise) must still route. Every string here comes from the sender and is untrusted.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

# An issue or PR number is a 32-bit integer on GitHub and in the store's columns.
Number = Annotated[int, Field(gt=0, le=2**31 - 1)]


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


class PullHead(_Loose):
    sha: str = Field(pattern=r"^[0-9a-f]{7,64}$")


class PullRequest(_Loose):
    number: Number
    draft: bool = False
    head: PullHead
    user: Account | None = None


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
    pull_request: PullRequest


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
