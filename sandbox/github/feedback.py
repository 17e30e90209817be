"""What people do with the bot's review comments, as GitHub serves it: replies (review comments
with ``in_reply_to_id``), reactions, resolved threads, and each person's permission on a repository.

Tests and the demo act as people through these helpers (``reply``, ``react``, ``resolve``,
``grant``); the routes in :mod:`sandbox.github.routes_feedback` and the GraphQL review threads
in :mod:`sandbox.github.graphql_threads` serve what they did.
"""

from __future__ import annotations

import dataclasses

from sandbox.github.model import Reaction, Repo, Review, ReviewComment
from sandbox.github.state import SandboxState

REACTIONS = frozenset({"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"})
# GitHub's answer for a collaborator's permission, weakest first ("maintain"/"triage" roles map
# to "write"/"read" in the legacy ``permission`` field).
# A repository role; the collaborator-permission answer names it as ``role_name`` and folds it
# into the older ``permission`` field (maintain counts as write there, triage as read).
PERMISSIONS = ("none", "read", "triage", "write", "maintain", "admin")
LEGACY_PERMISSION = {"maintain": "write", "triage": "read"}


def find_comment(repo: Repo, comment_id: int) -> ReviewComment | None:
    for issue in repo.pulls():
        assert issue.pull is not None
        for comment in issue.pull.review_comments:
            if comment.id == comment_id:
                return comment
    return None


def repo_comments(repo: Repo) -> list[ReviewComment]:
    """Every review comment of the repository, oldest first (GitHub's default order)."""
    found = [c for i in repo.pulls() if i.pull is not None for c in i.pull.review_comments]
    return sorted(found, key=lambda c: (c.at, c.id))


def _acted_on(
    state: SandboxState, full_name: str, comment_id: int, login: str, *, root: bool = False
) -> tuple[Repo, ReviewComment]:
    """The comment (or the first comment of its thread) ``login`` acts on; people unknown to
    the sandbox become users. Caller holds the lock."""
    repo = state.repo(full_name)
    found = thread_root(repo, comment_id) if root else find_comment(repo, comment_id)
    if found is None:
        raise KeyError(f"no review comment {comment_id} in {full_name}")
    if login not in state.users:
        state.add_user(login, type="Bot" if login.endswith("[bot]") else "User")
    return repo, found


def reply(state: SandboxState, full_name: str, comment_id: int, body: str, author: str) -> int:
    """``author`` replies to review comment ``comment_id``; returns the reply's id."""
    with state.lock:
        repo, parent = _acted_on(state, full_name, comment_id, author)
        pull = repo.issues[parent.pull_number].pull
        assert pull is not None
        # A reply stands where its parent stands (review, path, commit, lines, hunk), as GitHub
        # shows it; what people did to the parent (reactions, resolving the thread) is not its.
        # GitHub files each reply in a thread under a review of its own: a bodyless COMMENTED
        # review by the replier at the PR's head, listed with the PR's other reviews.
        review = Review(
            id=state.next_id(),
            pull_number=parent.pull_number,
            user_login=author,
            body="",
            state="COMMENTED",
            commit_id=pull.head_sha,
            at=state.clock.now(),
        )
        child = dataclasses.replace(
            parent,
            id=state.next_id(),
            review_id=review.id,
            body=body,
            user_login=author,
            at=state.clock.now(),
            in_reply_to_id=parent.id,
            reactions=[],
            resolved_by=None,
            thread_changed_by=None,
        )
        review.comment_ids.append(child.id)
        pull.reviews.append(review)
        pull.review_comments.append(child)
        state.emit(
            "pull_request_review_comment", "created", repo, repo.issues[parent.pull_number], child
        )
        return child.id


def react(state: SandboxState, full_name: str, comment_id: int, content: str, author: str) -> int:
    """``author`` reacts to review comment ``comment_id`` (``+1``, ``-1``, ...)."""
    if content not in REACTIONS:
        raise ValueError(f"reaction {content!r} is not one of {sorted(REACTIONS)}")
    with state.lock:
        _, comment = _acted_on(state, full_name, comment_id, author)
        reaction = Reaction(state.next_id(), content, author, state.clock.now())
        comment.reactions.append(reaction)
        return reaction.id


def grant(state: SandboxState, full_name: str, login: str, permission: str) -> None:
    """Make ``login`` a collaborator of the repository with ``permission``."""
    if permission not in PERMISSIONS:
        raise ValueError(f"permission {permission!r} is not one of {PERMISSIONS}")
    with state.lock:
        state.repo(full_name).collaborators[login] = permission


def permission_of(state: SandboxState, repo: Repo, login: str) -> str:
    """``login``'s role in the repository: owners are admin, others what they were granted."""
    if login == repo.owner.login:
        return "admin"
    return repo.collaborators.get(login, "none")


def may_resolve(state: SandboxState, repo: Repo, pull_number: int, login: str) -> bool:
    """GitHub lets the pull request's author resolve its threads, and anyone with write access."""
    issue = repo.issues.get(pull_number)
    if issue is not None and issue.user_login == login:
        return True
    return permission_of(state, repo, login) in ("write", "maintain", "admin")


def thread_root(repo: Repo, comment_id: int) -> ReviewComment | None:
    """The first comment of the thread ``comment_id`` belongs to (itself when it is one)."""
    comment = find_comment(repo, comment_id)
    while comment is not None and comment.in_reply_to_id:
        comment = find_comment(repo, comment.in_reply_to_id)
    return comment


def thread_of(repo: Repo, root: ReviewComment) -> list[ReviewComment]:
    """The thread ``root`` starts: itself, then the replies to it, oldest first."""
    pull = repo.issues[root.pull_number].pull
    assert pull is not None
    return [root] + [c for c in pull.review_comments if c.in_reply_to_id == root.id]


def resolve(
    state: SandboxState, full_name: str, comment_id: int, login: str, *, resolved: bool = True
) -> ReviewComment:
    """``login`` resolves (or, with ``resolved=False``, reopens) the thread of ``comment_id``;
    refused like GitHub refuses it for anyone but the PR's author and people with write access."""
    with state.lock:
        repo, root = _acted_on(state, full_name, comment_id, login, root=True)
        if not may_resolve(state, repo, root.pull_number, login):
            raise PermissionError(f"{login} may not resolve threads of #{root.pull_number}")
        root.resolved_by = login if resolved else None
        root.thread_changed_by = login
        issue = repo.issues[root.pull_number]
        action = "resolved" if resolved else "unresolved"
        state.emit("pull_request_review_thread", action, repo, issue, root)
        return root
