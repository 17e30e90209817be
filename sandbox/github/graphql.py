"""A small GraphQL stand-in: the handful of operations the product sends, found by scanning
the top-level fields of the operation; anything else is a GraphQL error, as GitHub answers."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from sandbox.github.clock import iso
from sandbox.github.errors import ApiError
from sandbox.github.gate import Ctx, Reply, Route
from sandbox.github.graphql_commits import MUTATIONS as COMMIT_MUTATIONS
from sandbox.github.graphql_parse import (
    JSON,
    Field,
    GraphQLFailure,
    fields_of,
    project,
    read_input,
    top_fields,
)
from sandbox.github.graphql_pulls import REPOSITORY_FIELDS, listing_values
from sandbox.github.graphql_threads import MUTATIONS as THREAD_MUTATIONS
from sandbox.github.graphql_threads import review_threads
from sandbox.github.model import Issue, Repo
from sandbox.github.render import node_id, parse_node_id
from sandbox.github.routes_pulls import create_review


def _pull_by_node(ctx: Ctx, node: Any) -> tuple[Repo, Issue]:
    missing = GraphQLFailure(
        f"Could not resolve to a node with the global id of '{node}'", "NOT_FOUND"
    )
    parts = parse_node_id("PR", node)
    if parts is None or len(parts) != 2:
        raise missing
    repo_id, number = parts
    repo = ctx.state.repo_by_id(repo_id)
    issue = repo.issues.get(number) if repo else None
    if repo is None or issue is None or issue.pull is None or not ctx.identity.can_see(repo):
        raise missing
    if not ctx.identity.has("pull_requests", "write"):
        raise GraphQLFailure(ctx.identity.forbidden_message, "FORBIDDEN")
    return repo, issue


def _viewer(ctx: Ctx, field: Field, variables: JSON) -> JSON:
    user = ctx.state.users.get(ctx.identity.login)
    values = {
        "login": ctx.identity.login,
        "id": node_id("U", user.id if user else 0),
        "databaseId": user.id if user else None,
    }
    return values


def _rate_limit(ctx: Ctx, field: Field, variables: JSON) -> JSON:
    s = ctx.state.limiter.status(ctx.identity.login, "graphql", ctx.now)
    values = {
        "cost": 1,
        "limit": s.limit,
        "remaining": s.remaining,
        "used": s.used,
        "resetAt": iso(s.reset),
        "nodeCount": 0,
    }
    return values


def _add_review(ctx: Ctx, field: Field, variables: JSON) -> JSON:
    data = read_input(field, variables)
    repo, issue = _pull_by_node(ctx, data.get("pullRequestId"))
    comments = list(data.get("comments") or []) + list(data.get("threads") or [])
    body = {
        "body": data.get("body"),
        "event": data.get("event"),
        "commit_id": data.get("commitOID"),
        "comments": comments,
    }
    sub = dataclasses.replace(ctx, repo=repo, params={"pull_number": str(issue.number)}, body=body)
    try:
        review = create_review(sub).body
    except ApiError as err:
        raise GraphQLFailure(
            "; ".join(str(e) for e in err.errors or [err.message]), "UNPROCESSABLE"
        ) from None
    return {
        "pullRequestReview": {
            "id": review["node_id"],
            "databaseId": review["id"],
            "state": review["state"],
            "url": review["html_url"],
            "body": review["body"],
            "author": {"login": review["user"]["login"]},
        }
    }


def _ready_for_review(ctx: Ctx, field: Field, variables: JSON) -> JSON:
    data = read_input(field, variables)
    _, issue = _pull_by_node(ctx, data.get("pullRequestId"))
    assert issue.pull is not None
    issue.pull.draft = False
    issue.updated_at = ctx.now
    return {"pullRequest": {"id": data["pullRequestId"], "number": issue.number, "isDraft": False}}


# GitHub's words for a repository a query cannot read, by the error's type.
_REPOSITORY_ERRORS = {
    "NOT_FOUND": "Could not resolve to a Repository with the name '{}'.",
    "FORBIDDEN": "Resource not accessible by integration",
    "INTERNAL": (
        "Something went wrong while executing your query. This may be the result of a timeout,"
        " or it could be a GitHub bug. Please include `{}` when reporting this issue."
    ),
}


def _repository(ctx: Ctx, field: Field, variables: JSON) -> JSON | None:
    def arg(name: str) -> str | None:
        m = re.search(
            rf'{name}\s*:\s*(?:"([^"]*)"|\$(\w+)|(\d+))', field.args + " " + field.selection
        )
        if not m:
            return None
        return m.group(1) or (str(variables.get(m.group(2))) if m.group(2) else m.group(3))

    repo = ctx.state.find_repo(f"{arg('owner')}/{arg('name')}")
    if repo is None or not ctx.identity.can_see(repo):
        raise GraphQLFailure(
            f"Could not resolve to a Repository with the name '{arg('owner')}/{arg('name')}'.",
            "NOT_FOUND",
            ["repository"],
        )
    failing = ctx.state.graphql_repository_errors.get(repo.full_name.lower())
    if failing is not None:
        raise GraphQLFailure(
            _REPOSITORY_ERRORS[failing].format(repo.full_name), failing, ["repository"]
        )
    values: JSON = {
        "id": node_id("R", repo.id),
        "nameWithOwner": repo.full_name,
        "databaseId": repo.id,
    }
    if any(sub.name in REPOSITORY_FIELDS for sub in fields_of(field.selection)):
        values.update(listing_values(ctx, repo, field, variables))
    number = arg("number")
    if re.search(r"\bpullRequest\s*\(", field.selection) and number is not None:
        issue = repo.issues.get(int(number))
        if issue is None or issue.pull is None:
            raise GraphQLFailure(
                f"Could not resolve to a PullRequest with the number of {number}.",
                "NOT_FOUND",
                ["repository", "pullRequest"],
            )
        values["pullRequest"] = {
            "id": node_id("PR", repo.id, issue.number),
            "number": issue.number,
            "title": issue.title,
            "isDraft": issue.pull.draft,
            "headRefOid": issue.pull.head_sha,
            "baseRefOid": issue.pull.base_sha,
            "state": issue.state.upper(),
            "author": {"login": issue.user_login},
        }
        if "reviewThreads" in field.selection:
            values["pullRequest"]["reviewThreads"] = review_threads(ctx, repo, issue)
    return values


QUERIES = {"viewer": _viewer, "rateLimit": _rate_limit, "repository": _repository}
MUTATIONS = {
    "addPullRequestReview": _add_review,
    "markPullRequestReadyForReview": _ready_for_review,
    **THREAD_MUTATIONS,
    **COMMIT_MUTATIONS,
}


def graphql(ctx: Ctx) -> Reply:
    payload = ctx.body if isinstance(ctx.body, dict) else {}
    query = payload.get("query")
    if not isinstance(query, str) or not query.strip():
        return Reply(
            {"errors": [{"message": "A query attribute must be specified and must be a string."}]}
        )
    variables = payload.get("variables") or {}
    data: JSON = {}
    errors: list[JSON] = []
    try:
        op, fields = top_fields(query)
        table = MUTATIONS if op == "mutation" else QUERIES
        type_name = "Mutation" if op == "mutation" else "Query"
        for f in fields:
            if f.name == "__typename":
                data[f.key] = type_name
                continue
            handler = table.get(f.name)
            if handler is None:
                raise GraphQLFailure(
                    f"Field '{f.name}' doesn't exist on type '{type_name}'", path=[op, f.name]
                )
            try:
                data[f.key] = project(handler(ctx, f, variables), f.selection)
            except GraphQLFailure as err:
                data[f.key] = None
                errors.append(err.error)
    except GraphQLFailure as err:
        return Reply({"errors": [err.error]})
    body: JSON = {"data": data}
    if errors:
        body["errors"] = errors
    return Reply(body)


ROUTES = [Route("POST", "/graphql", graphql, resource="graphql")]
