"""Reactions to conversation comments (issues and pull requests; the permission each needs is
sourced in docs/github-facts.md, row 30); who may do what in a
repository is answered by ``routes_feedback``."""

from __future__ import annotations

from sandbox.github import render
from sandbox.github.clock import iso
from sandbox.github.errors import not_found, unprocessable
from sandbox.github.gate import Ctx, Reply, Route
from sandbox.github.model import Issue, IssueComment

REACTIONS = frozenset({"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"})


def _comment(ctx: Ctx) -> tuple[Issue, IssueComment]:
    try:
        wanted = int(ctx.params["comment_id"])
    except ValueError:
        raise not_found() from None
    for issue in ctx.the_repo.issues.values():
        for comment in issue.comments:
            if comment.id == wanted:
                return issue, comment
    raise not_found()


def create_reaction(ctx: Ctx) -> Reply:
    issue, comment = _comment(ctx)
    if issue.pull is not None:
        ctx.require(("issues", "write"), ("pull_requests", "write"))
    else:
        ctx.require(("issues", "write"))
    content = ctx.body.get("content") if isinstance(ctx.body, dict) else None
    if content not in REACTIONS:
        raise unprocessable("Validation Failed", [{"field": "content", "code": "invalid"}])
    login = ctx.identity.login
    if login not in ctx.state.users:
        ctx.state.add_user(login, type="Bot" if login.endswith("[bot]") else "User")
    status = 200 if (login, content) in comment.reactions else 201
    if status == 201:
        comment.reactions.append((login, content))
    return Reply(
        {
            "id": (reaction_id := ctx.state.next_id()),
            "node_id": render.node_id("REA", reaction_id),
            "content": content,
            "user": render.user(ctx.urls, ctx.state.users[login]),
            "created_at": iso(ctx.now),
        },
        status=status,
    )


ROUTES = [
    Route(
        "POST",
        "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions",
        create_reaction,
    ),
]
