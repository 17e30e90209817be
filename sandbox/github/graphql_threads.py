"""Review threads over GraphQL, the only place GitHub says whether a thread is resolved and by
whom: ``pullRequest.reviewThreads`` and the ``resolveReviewThread`` / ``unresolveReviewThread``
mutations people and Apps send (an App's installation token needs ``contents: write`` besides
``pull_requests: write``: :func:`app_may_resolve`)."""

from __future__ import annotations

from sandbox.github.clock import iso
from sandbox.github.feedback import may_resolve, resolve, thread_of, thread_root
from sandbox.github.gate import Ctx
from sandbox.github.graphql_parse import JSON, Field, GraphQLFailure, read_input
from sandbox.github.model import Issue, Repo, ReviewComment
from sandbox.github.render import node_id, parse_node_id

BOT_SUFFIX = "[bot]"


def actor(login: str) -> JSON:
    """An ``Actor`` as GraphQL names it: a GitHub App's bot is a ``Bot`` whose login has no
    ``[bot]`` (REST's ``swarm-reviewer[bot]`` is GraphQL's ``swarm-reviewer``; only ``viewer``
    answers with the suffix), a person a ``User``."""
    if login.endswith(BOT_SUFFIX):
        return {"__typename": "Bot", "login": login.removesuffix(BOT_SUFFIX)}
    return {"__typename": "User", "login": login}


def resolver(login: str | None) -> JSON | None:
    """``resolvedBy``, typed ``User`` in GitHub's schema: an App's bot that resolved the thread
    answers as a ``User`` with the login it has in GraphQL, without ``[bot]``; so a reader cannot
    tell it from a person whose login is the App's slug (the product counts that login as the
    bot's, and learns nothing from it)."""
    if login is None:
        return None
    return {"__typename": "User", "login": login.removesuffix(BOT_SUFFIX)}


def _comment_node(ctx: Ctx, repo: Repo, c: ReviewComment) -> JSON:
    return {
        "__typename": "PullRequestReviewComment",
        "id": node_id("PRRC", c.id),
        "databaseId": c.id,
        "body": c.body,
        "path": c.path,
        "line": c.line,
        "createdAt": iso(c.at),
        "url": f"{ctx.urls.web}/{repo.full_name}/pull/{c.pull_number}#discussion_r{c.id}",
        "author": actor(c.user_login),
        "replyTo": {"databaseId": c.in_reply_to_id} if c.in_reply_to_id else None,
    }


def thread_node(ctx: Ctx, repo: Repo, root: ReviewComment) -> JSON:
    pull = repo.issues[root.pull_number].pull
    assert pull is not None
    nodes = [_comment_node(ctx, repo, c) for c in thread_of(repo, root)]
    return {
        "__typename": "PullRequestReviewThread",
        "id": node_id("PRRT", repo.id, root.id),
        "isResolved": root.resolved_by is not None,
        "isOutdated": root.commit_id != pull.head_sha,
        "path": root.path,
        "line": root.line,
        "resolvedBy": resolver(root.resolved_by),
        "comments": {"totalCount": len(nodes), "nodes": nodes},
    }


def review_threads(ctx: Ctx, repo: Repo, issue: Issue) -> JSON:
    """Every thread of the pull request, oldest first, on one page."""
    assert issue.pull is not None
    roots = [c for c in issue.pull.review_comments if not c.in_reply_to_id]
    nodes = [thread_node(ctx, repo, c) for c in sorted(roots, key=lambda c: (c.at, c.id))]
    return {
        "totalCount": len(nodes),
        "nodes": nodes,
        "pageInfo": {"hasNextPage": False, "endCursor": None},
    }


def _thread_by_node(ctx: Ctx, node: object) -> tuple[Repo, ReviewComment]:
    parts = parse_node_id("PRRT", node)
    repo = ctx.state.repo_by_id(parts[0]) if parts and len(parts) == 2 else None
    root = thread_root(repo, parts[1]) if repo and parts else None
    if repo is None or root is None or not ctx.identity.can_see(repo):
        raise GraphQLFailure(
            f"Could not resolve to a node with the global id of '{node}'", "NOT_FOUND"
        )
    return repo, root


def app_may_resolve(ctx: Ctx) -> bool:
    """Whether an App's installation token may resolve a thread: GitHub gates the mutation on
    repository write access, which for an installation token is ``contents: write``;
    ``pull_requests: write`` with ``contents: read`` is refused (github/gh-aw#35726, a table of
    both grants; PostHog/posthog#52454; oven-sh/bun#40468 probed both grants a minute apart)."""
    return ctx.identity.has("pull_requests", "write") and ctx.identity.has("contents", "write")


def _set_resolved(ctx: Ctx, field: Field, variables: JSON, resolved: bool) -> JSON:
    repo, root = _thread_by_node(ctx, read_input(field, variables).get("threadId"))
    login = ctx.identity.login
    if ctx.identity.kind == "installation":
        if not app_may_resolve(ctx):
            # GitHub's answer, as github/gh-aw#35726 reproduces it: HTTP 200, the field null,
            # one FORBIDDEN error with the integration's message and no path.
            raise GraphQLFailure(ctx.identity.forbidden_message, "FORBIDDEN")
        root.resolved_by = login if resolved else None
        return {"thread": thread_node(ctx, repo, root)}
    allowed = ctx.identity.has("pull_requests", "write") and may_resolve(
        ctx.state, repo, root.pull_number, login
    )
    if not allowed:
        raise GraphQLFailure(
            f"{login} does not have permission to resolve review threads on this pull request.",
            "FORBIDDEN",
        )
    resolve(ctx.state, repo.full_name, root.id, login, resolved=resolved)
    return {"thread": thread_node(ctx, repo, root)}


def resolve_thread(ctx: Ctx, field: Field, variables: JSON) -> JSON:
    return _set_resolved(ctx, field, variables, True)


def unresolve_thread(ctx: Ctx, field: Field, variables: JSON) -> JSON:
    return _set_resolved(ctx, field, variables, False)


MUTATIONS = {"resolveReviewThread": resolve_thread, "unresolveReviewThread": unresolve_thread}
