"""Review comment threads, reactions and collaborator permissions: what a bot reads to learn
from the people it reviews for (``GET /repos/{o}/{r}/pulls/comments`` with replies,
``.../pulls/comments/{id}/reactions``, ``.../collaborators/{login}/permission``), plus the
reply and reaction writes people make."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sandbox.github import render, render_pulls
from sandbox.github.clock import iso
from sandbox.github.errors import not_found, unprocessable
from sandbox.github.feedback import (
    LEGACY_PERMISSION,
    REACTIONS,
    find_comment,
    permission_of,
    react,
    reply,
    repo_comments,
)
from sandbox.github.gate import Ctx, Reply, Route
from sandbox.github.model import ReviewComment
from sandbox.github.paging import page_of


def _comment(ctx: Ctx) -> ReviewComment:
    try:
        found = find_comment(ctx.the_repo, int(ctx.params["comment_id"]))
    except ValueError:
        raise not_found() from None
    if found is None:
        raise not_found()
    return found


# GitHub's sort keys for review comment listings. The sandbox never edits a review comment, so
# a comment's last update is its creation.
_SORTS = frozenset({"created", "updated", "created_at"})


def listed_comments(ctx: Ctx, comments: list[ReviewComment]) -> list[ReviewComment]:
    """``comments`` as GitHub lists review comments (of a repository or of one pull request):
    ``since`` keeps those last updated at or after that ISO 8601 time; then by ascending id, or
    by ``sort`` in ``direction`` (ignored without ``sort``)."""
    since = ctx.query.get("since")
    if since:
        try:
            moment = datetime.fromisoformat(since)
        except ValueError:
            raise unprocessable(f"Invalid value for parameter 'since': {since!r}") from None
        floor = iso((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp())
        comments = [c for c in comments if iso(c.at) >= floor]
    sort = ctx.query.get("sort")
    if sort is None:
        return sorted(comments, key=lambda c: c.id)
    direction = ctx.query.get("direction", "desc")
    if sort not in _SORTS or direction not in ("asc", "desc"):
        raise unprocessable("Validation Failed", [{"field": "sort", "code": "invalid"}])
    # GitHub documents no default direction here; like its other listings sorted by a time,
    # the sandbox takes newest first (the product always says which it wants).
    return sorted(comments, key=lambda c: (c.at, c.id), reverse=direction == "desc")


def list_repo_review_comments(ctx: Ctx) -> Reply:
    comments = listed_comments(ctx, repo_comments(ctx.the_repo))
    chunk, headers = page_of(ctx, comments)
    users = ctx.state.users
    return Reply(
        [render_pulls.review_comment(ctx.urls, ctx.the_repo, c, users) for c in chunk],
        headers=headers,
    )


def get_review_comment(ctx: Ctx) -> Reply:
    comment = _comment(ctx)
    return Reply(render_pulls.review_comment(ctx.urls, ctx.the_repo, comment, ctx.state.users))


def _reaction(ctx: Ctx, r: Any) -> dict[str, Any]:
    return {
        "id": r.id,
        "node_id": render.node_id("REA", r.id),
        "user": render.user(ctx.urls, ctx.state.users[r.user_login]),
        "content": r.content,
        "created_at": iso(r.at),
    }


def list_reactions(ctx: Ctx) -> Reply:
    comment = _comment(ctx)
    chunk, headers = page_of(ctx, list(comment.reactions))
    return Reply([_reaction(ctx, r) for r in chunk], headers=headers)


def create_reaction(ctx: Ctx) -> Reply:
    comment = _comment(ctx)
    content = ctx.body.get("content") if isinstance(ctx.body, dict) else None
    if content not in REACTIONS:
        raise unprocessable("Validation Failed", [{"field": "content", "code": "invalid"}])
    react(ctx.state, ctx.the_repo.full_name, comment.id, str(content), ctx.identity.login)
    return Reply(_reaction(ctx, comment.reactions[-1]), status=201)


def create_reply(ctx: Ctx) -> Reply:
    parent = _comment(ctx)
    body = ctx.body.get("body") if isinstance(ctx.body, dict) else None
    if not body:
        raise unprocessable("Validation Failed", [{"field": "body", "code": "missing_field"}])
    new_id = reply(ctx.state, ctx.the_repo.full_name, parent.id, str(body), ctx.identity.login)
    child = find_comment(ctx.the_repo, new_id)
    assert child is not None
    users = ctx.state.users
    return Reply(render_pulls.review_comment(ctx.urls, ctx.the_repo, child, users), status=201)


def collaborator_permission(ctx: Ctx) -> Reply:
    login = ctx.params["username"]
    found = ctx.state.users.get(login)
    if found is None:
        raise not_found()
    role = permission_of(ctx.state, ctx.the_repo, login)
    return Reply(
        {
            "permission": LEGACY_PERMISSION.get(role, role),
            "role_name": role,
            "user": render.user(ctx.urls, found),
        }
    )


_COMMENTS = "/repos/{owner}/{repo}/pulls/comments"
ROUTES = [
    Route("GET", _COMMENTS, list_repo_review_comments, permission=("pull_requests", "read")),
    Route(
        "GET", _COMMENTS + "/{comment_id}", get_review_comment, permission=("pull_requests", "read")
    ),
    Route(
        "GET",
        _COMMENTS + "/{comment_id}/reactions",
        list_reactions,
        permission=("pull_requests", "read"),
    ),
    Route(
        "POST",
        _COMMENTS + "/{comment_id}/reactions",
        create_reaction,
        permission=("pull_requests", "read"),
    ),
    Route(
        "POST",
        "/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies",
        create_reply,
        permission=("pull_requests", "write"),
        content_creation=True,
    ),
    Route(
        "GET",
        "/repos/{owner}/{repo}/collaborators/{username}/permission",
        collaborator_permission,
        permission=("metadata", "read"),
    ),
]
