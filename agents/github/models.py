"""GitHub's REST resources as the swarm reads them: one TypedDict each, in GitHub's field names.

A pull request reaches the code from ``GET /pulls/{n}``, from the GraphQL listing (given REST's
shape in :mod:`agents.github.pull_listing`), from a discovery snapshot and from the writer's
``GET``/``POST /pulls``: each is a :class:`Pull`, the one shape of a pull request under
``agents/`` (issue 33). Discovery, the tools, the review writer and the writer read it as it
is, through the small functions below it where a field is read more than once (``head_sha``,
``author_login``...), not through a second class. The fields are the ones the swarm reads or
writes; GitHub sends more, and they stay in the dict, unread.
``total=False``: the listing's pull request carries no counts (``changed_files``,
``additions``), a deleted account is ``None``, and a reader keeps its ``.get`` with a default
where GitHub may leave a field out. Nothing is validated on the way in (a TypedDict is a dict):
the answers are what they were, only their type is said.

Why not githubkit's generated models (``githubkit_schemas.latest.models.PullRequest`` and the
rest)? They were tried for the pull request against the sandbox, which replays GitHub's own
payloads: the answer of ``GET /pulls/{n}`` (48 keys) validates, in about 0.1 ms a PR, but the
listing's pull request does not (GraphQL answers only the fields discovery asks for: validation
reports 180 required fields missing, nested ones counted), so githubkit's model could not be the
one PR shape; and its attribute access would change every reader of these dicts (the tools and
the write path) for fields the swarm never reads. githubkit's models keep the job they do well:
``tests/sandbox/test_answers_match_github.py`` validates every answer the sandbox gives against
them, which is what keeps these TypedDicts' field names GitHub's.
"""

from __future__ import annotations

# typing_extensions' TypedDict, not typing's: pydantic validates a webhook's pull request as a
# ``Pull`` (agents.events.payloads) and refuses typing's TypedDict before Python 3.12.
from typing_extensions import TypedDict


class Account(TypedDict, total=False):
    """A ``user``: a person, or an App's bot (``type`` ``Bot``, login ``name[bot]``)."""

    login: str
    type: str
    id: int


class Label(TypedDict, total=False):
    name: str


class RepoRef(TypedDict, total=False):
    full_name: str | None


class Side(TypedDict, total=False):
    """A pull request's ``head`` or ``base``; ``repo`` None: the fork was deleted."""

    sha: str | None
    ref: str | None
    repo: RepoRef | None


class Pull(TypedDict, total=False):
    id: int | None
    # GraphQL's id of the pull request (marking a draft ready is GraphQL only).
    node_id: str
    number: int
    state: str
    title: str
    body: str | None
    html_url: str | None
    draft: bool
    # A webhook's pull request may carry null here (octokit/webhooks schema: boolean | null),
    # and the webhook validates against this shape.
    merged: bool | None
    created_at: str | None
    updated_at: str | None
    user: Account | None
    labels: list[Label]
    head: Side
    base: Side
    # Only ``GET /pulls/{n}`` has the counts; the listing's pull request does not.
    changed_files: int
    additions: int
    deletions: int
    commits: int


# What the swarm reads of a pull request more than once, read one way: the readers take the
# ``Pull`` itself rather than a second class that copies these fields out of it.


def head_sha(pull: Pull) -> str:
    """The commit the pull request's head is at ("" when GitHub left it out)."""
    return str(pull.get("head", {}).get("sha") or "")


def base_sha(pull: Pull) -> str | None:
    return pull.get("base", {}).get("sha")


def author_login(pull: Pull) -> str | None:
    """The author's login; None for a deleted account."""
    return (pull.get("user") or {}).get("login")


def pull_url(pull: Pull) -> str:
    """The pull request's page on GitHub ("" when GitHub left it out)."""
    return str(pull.get("html_url") or "")


def label_names(pull: Pull) -> tuple[str, ...]:
    return tuple(str(label.get("name")) for label in pull.get("labels") or ())


class Review(TypedDict, total=False):
    id: int | None
    user: Account | None
    body: str
    state: str | None
    commit_id: str | None
    submitted_at: str | None
    html_url: str | None


class ReviewComment(TypedDict, total=False):
    """A review comment: an inline finding, or a reply in its thread (``in_reply_to_id``)."""

    id: int
    user: Account | None
    body: str
    path: str
    line: int | None
    original_line: int | None
    start_line: int | None
    start_side: str | None
    side: str | None
    commit_id: str
    original_commit_id: str
    in_reply_to_id: int
    pull_request_review_id: int | None
    pull_request_url: str
    diff_hunk: str
    html_url: str
    created_at: str
    updated_at: str


class Issue(TypedDict, total=False):
    id: int
    number: int
    state: str
    title: str
    body: str | None
    html_url: str
    user: Account | None
    labels: list[Label]
    # Present (an object) when the issue is a pull request.
    pull_request: dict[str, str | None]
    created_at: str
    updated_at: str


class Reaction(TypedDict, total=False):
    id: int
    user: Account | None
    content: str


class ThreadComments(TypedDict, total=False):
    nodes: list[dict[str, int | None]]


class ReviewThread(TypedDict, total=False):
    """A GraphQL ``reviewThreads`` node: REST does not say whether a thread is resolved."""

    id: str
    isResolved: bool
    resolvedBy: dict[str, str] | None
    comments: ThreadComments


class CollaboratorPermission(TypedDict, total=False):
    """``GET /collaborators/{login}/permission``: ``role_name`` tells ``maintain`` and
    ``triage`` apart, which ``permission`` folds into ``write`` and ``read``."""

    permission: str
    role_name: str
