"""Discovery's GraphQL listing: ``repository { defaultBranchRef object pullRequests }``.

GitHub's shapes where they differ from REST: an App's bot is an actor of ``__typename`` ``Bot``
whose ``login`` has no ``[bot]`` suffix; ``reviews(last: N)`` gives the newest N, oldest first,
with ``totalCount`` of them all; a pull request's ``reviews`` include the bodyless ``COMMENTED``
review GitHub makes for each reply in a thread; ``object(expression: "REF:path")`` is the file
at REF (``HEAD`` is the default branch), null when the file is not there.
"""

from __future__ import annotations

import re
from typing import Any

from sandbox.github.clock import iso
from sandbox.github.errors import ApiError
from sandbox.github.gate import Ctx
from sandbox.github.graphql_parse import JSON, Field, GraphQLFailure, fields_of
from sandbox.github.graphql_threads import actor
from sandbox.github.model import Issue, Repo, Review

REPOSITORY_FIELDS = frozenset({"defaultBranchRef", "object", "pullRequests"})
MAX_PAGE = 100


def _arg(args: str, name: str, variables: JSON) -> Any:
    """An argument's value: a string or number literal, an enum word, or a ``$variable``."""
    m = re.search(rf'\b{name}\s*:\s*(?:"((?:[^"\\]|\\.)*)"|\$(\w+)|(-?\d+)|([A-Z_]+))', args)
    if not m:
        return None
    if m.group(2):
        return variables.get(m.group(2))
    if m.group(3):
        return int(m.group(3))
    return m.group(1) if m.group(1) is not None else m.group(4)


def _author(login: str | None) -> JSON | None:
    return actor(login) if login else None


def _review(ctx: Ctx, repo: Repo, rv: Review) -> JSON:
    return {
        "__typename": "PullRequestReview",
        "id": f"PRR_{rv.id}",
        "databaseId": rv.id,
        "body": rv.body,
        "state": rv.state,
        "submittedAt": iso(rv.at) if rv.state != "PENDING" else None,
        "url": f"{ctx.urls.web}/{repo.full_name}/pull/{rv.pull_number}#pullrequestreview-{rv.id}",
        "author": _author(rv.user_login),
        "commit": {"__typename": "Commit", "oid": rv.commit_id},
    }


def _connection(nodes: list[JSON], args: str, variables: JSON) -> JSON:
    """A page of ``nodes`` from ``after`` (the cursor is the index past the page), ``first`` of
    them; a connection asked with ``last`` is cut by :func:`graphql_parse.project`."""
    first, after = _arg(args, "first", variables), _arg(args, "after", variables)
    start = int(after) if isinstance(after, str) and after.isdigit() else 0
    size = min(first if isinstance(first, int) else MAX_PAGE, MAX_PAGE)
    page, end = nodes[start : start + size], start + size
    return {
        "totalCount": len(nodes),
        "nodes": page,
        "pageInfo": {"hasNextPage": end < len(nodes), "endCursor": str(end) if page else None},
    }


def _pull(ctx: Ctx, repo: Repo, issue: Issue) -> JSON:
    """A pull request with all its labels and reviews: :func:`graphql_parse.project` answers
    the ``first``/``last`` of them asked for, ``totalCount`` counting all."""
    pull = issue.pull
    assert pull is not None
    reviews = [_review(ctx, repo, rv) for rv in pull.reviews if rv.state != "PENDING"]
    labels = [{"__typename": "Label", "name": lbl.name} for lbl in issue.labels]
    return {
        "__typename": "PullRequest",
        "id": f"PR_{repo.id}_{issue.number}",
        "databaseId": repo.id * 10_000 + issue.number,
        "number": issue.number,
        "title": issue.title,
        "body": issue.body or "",
        "url": f"{ctx.urls.web}/{repo.full_name}/pull/{issue.number}",
        "isDraft": pull.draft,
        "state": issue.state.upper(),
        "createdAt": iso(issue.created_at),
        "updatedAt": iso(issue.updated_at),
        "headRefName": pull.head_ref,
        "headRefOid": pull.head_sha,
        "baseRefName": pull.base_ref,
        "baseRefOid": pull.base_sha,
        "headRepository": {"__typename": "Repository", "nameWithOwner": repo.full_name},
        "author": _author(issue.user_login),
        "changedFiles": len(pull.files),
        "labels": {"totalCount": len(labels), "nodes": labels},
        "reviews": {"totalCount": len(reviews), "nodes": reviews},
    }


# GitHub's answer to a query it stopped at its 10 s limit (a 502 from its front end).
TIMEOUT_MESSAGE = (
    "We couldn't respond to your request in time. Sorry about that. Please try resubmitting "
    "your request and contact us if the problem persists."
)


def _times_out(ctx: Ctx, field: Field, variables: JSON) -> None:
    """GitHub stops a query past 10 s with a 502 and charges its points, and more for the
    next hour (docs: "Rate limits and query limits for the GraphQL API", timeouts); here, a
    page larger than the knob says. The gate has charged the request already."""
    over = ctx.state.knobs.graphql_listing_times_out_over
    first = _arg(field.args, "first", variables)
    if over is not None and isinstance(first, int) and first > over:
        raise ApiError(502, TIMEOUT_MESSAGE)


def _pull_requests(ctx: Ctx, repo: Repo, field: Field, variables: JSON) -> JSON:
    _times_out(ctx, field, variables)
    states = _arg(field.args, "states", variables)
    wanted = {str(states).upper()} if states else {"OPEN", "CLOSED", "MERGED"}
    found = [i for i in repo.pulls() if i.state.upper() in wanted]
    newest_first = re.search(r"direction\s*:\s*DESC", field.args) is not None
    found.sort(key=lambda i: (i.created_at, i.number), reverse=newest_first)
    nodes = [_pull(ctx, repo, i) for i in found]
    return _connection(nodes, field.args, variables)


def _object(ctx: Ctx, repo: Repo, field: Field, variables: JSON) -> JSON | None:
    expression = _arg(field.args, "expression", variables)
    if not isinstance(expression, str) or ":" not in expression:
        raise GraphQLFailure("Argument 'expression' on Field 'object' must be REF:PATH")
    if not ctx.identity.has("contents", "read"):
        raise GraphQLFailure("Resource not accessible by integration", "FORBIDDEN", ["object"])
    ctx.state.blob_reads.append((ctx.identity.login, repo.full_name, expression))
    ref, _, path = expression.partition(":")
    commit = repo.resolve(repo.default_branch if ref in ("", "HEAD") else ref)
    blob = commit.tree.get(path.strip("/")) if commit is not None else None
    if blob is None:
        return None
    binary = isinstance(blob, bytes) and b"\0" in blob
    text = None if binary else (blob if isinstance(blob, str) else blob.decode("utf-8", "replace"))
    size = len(blob) if isinstance(blob, bytes) else len(blob.encode())
    return {"__typename": "Blob", "text": text, "isBinary": binary, "byteSize": size}


def listing_values(ctx: Ctx, repo: Repo, field: Field, variables: JSON) -> JSON:
    """The values of ``repository``'s listing fields, each under the key it is asked as."""
    values: JSON = {}
    for sub in fields_of(field.selection):
        if sub.name == "defaultBranchRef":
            values[sub.key] = {
                "__typename": "Ref",
                "name": repo.default_branch,
                "target": {"__typename": "Commit", "oid": repo.branches[repo.default_branch]},
            }
        elif sub.name == "object":
            values[sub.key] = _object(ctx, repo, sub, variables)
        elif sub.name == "pullRequests":
            if not ctx.identity.has("pull_requests", "read"):
                raise GraphQLFailure(
                    "Resource not accessible by integration", "FORBIDDEN", ["pullRequests"]
                )
            values[sub.key] = _pull_requests(ctx, repo, sub, variables)
    return values
