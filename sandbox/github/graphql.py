"""A small GraphQL stand-in: the handful of operations the product sends, found by scanning
the top-level fields of the operation; anything else is a GraphQL error, as GitHub answers."""

from __future__ import annotations

import base64
import dataclasses
import json
import re
from typing import Any

from sandbox.github.clock import iso
from sandbox.github.errors import ApiError
from sandbox.github.gate import Ctx, Reply, Route
from sandbox.github.model import Issue, Repo
from sandbox.github.render import node_id
from sandbox.github.routes_pulls import create_review

JSON = dict[str, Any]
_IDENT = re.compile(r"[_A-Za-z][_0-9A-Za-z]*")


@dataclasses.dataclass
class Field:
    name: str
    args: str
    selection: str


class GraphQLFailure(Exception):
    def __init__(
        self, message: str, type_: str | None = None, path: list[str] | None = None
    ) -> None:
        super().__init__(message)
        self.error: JSON = {"message": message}
        if type_:
            self.error["type"] = type_
        if path:
            self.error["path"] = path


def _balanced(text: str, start: int, open_: str, close: str) -> int:
    """Index just past the bracket matching text[start]."""
    depth = 0
    i = start
    while i < len(text):
        ch = text[i]
        if ch == '"':  # brackets inside string values do not count
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif ch == open_:
            depth += 1
        elif ch == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise GraphQLFailure(f"Parse error: unbalanced '{open_}'")


def top_fields(query: str) -> tuple[str, list[Field]]:
    text = re.sub(r"#[^\n]*", "", query)
    op = "mutation" if re.match(r"\s*mutation\b", text) else "query"
    start = text.find("{")
    if start < 0:
        raise GraphQLFailure("Parse error: no selection set")
    return op, _fields(text[start + 1 : _balanced(text, start, "{", "}") - 1])


def _fields(text: str) -> list[Field]:
    """The fields of one selection set (the text between its braces)."""
    fields: list[Field] = []
    i, end = 0, len(text)
    while i < end:
        ch = text[i]
        if ch.isspace() or ch == ",":
            i += 1
            continue
        match = _IDENT.match(text, i)
        if not match:
            raise GraphQLFailure(f"Parse error on {text[i]!r}")
        name, i = match.group(), match.end()
        if text[i:end].lstrip().startswith(":"):  # alias
            i = text.index(":", i) + 1
            while i < end and text[i].isspace():
                i += 1
            match = _IDENT.match(text, i)
            if not match:
                raise GraphQLFailure("Parse error after alias")
            name, i = match.group(), match.end()
        args = selection = ""
        while i < end and text[i].isspace():
            i += 1
        if i < end and text[i] == "(":
            close = _balanced(text, i, "(", ")")
            args, i = text[i + 1 : close - 1], close
            while i < end and text[i].isspace():
                i += 1
        if i < end and text[i] == "{":
            close = _balanced(text, i, "{", "}")
            selection, i = text[i + 1 : close - 1], close
        fields.append(Field(name, args, selection))
    return fields


def _project(value: Any, selection: str) -> Any:
    """Keep only the selected sub-fields, as a GraphQL server answers."""
    if not selection.strip() or value is None:
        return value
    if isinstance(value, list):
        return [_project(v, selection) for v in value]
    if not isinstance(value, dict):
        return value
    return {
        f.name: _project(value[f.name], f.selection) for f in _fields(selection) if f.name in value
    }


def _input(field: Field, variables: JSON) -> JSON:
    var = re.search(r"input\s*:\s*\$(\w+)", field.args)
    if var:
        value = variables.get(var.group(1))
        if not isinstance(value, dict):
            raise GraphQLFailure(f"Variable ${var.group(1)} of type input was not provided.")
        return value
    # Inline literal input: quote the keys and read it as JSON.
    inline = re.search(r"input\s*:\s*(\{.*\})", field.args, re.S)
    if not inline:
        raise GraphQLFailure(f"Argument 'input' on Field '{field.name}' is required.")
    try:
        value = json.loads(_literal_to_json(inline.group(1), variables))
    except ValueError:
        raise GraphQLFailure(f"Parse error in the input of '{field.name}'") from None
    if not isinstance(value, dict):
        raise GraphQLFailure(f"Parse error in the input of '{field.name}'")
    return value


def _literal_to_json(text: str, variables: JSON) -> str:
    """GraphQL input literal -> JSON: quote keys and enum values, inline $variables,
    leave string contents alone."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            end = i + 1
            while end < len(text) and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[i : end + 1])
            i = end + 1
        elif ch == "$":
            match = _IDENT.match(text, i + 1)
            name = match.group() if match else ""
            out.append(json.dumps(variables.get(name)))
            i += 1 + len(name)
        elif match := _IDENT.match(text, i):
            word = match.group()
            is_key = text[match.end() :].lstrip().startswith(":")
            plain = word in ("true", "false", "null") and not is_key
            out.append(word if plain else json.dumps(word))
            i = match.end()
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _pull_by_node(ctx: Ctx, node: Any) -> tuple[Repo, Issue]:
    missing = GraphQLFailure(
        f"Could not resolve to a node with the global id of '{node}'", "NOT_FOUND"
    )
    if not isinstance(node, str) or not node.startswith("PR_"):
        raise missing
    try:
        raw = node[3:] + "=" * (-len(node[3:]) % 4)
        repo_id, number = (int(x) for x in base64.urlsafe_b64decode(raw).decode().split(":"))
    except ValueError:
        raise missing from None
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
    data = _input(field, variables)
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
    data = _input(field, variables)
    _, issue = _pull_by_node(ctx, data.get("pullRequestId"))
    assert issue.pull is not None
    issue.pull.draft = False
    issue.updated_at = ctx.now
    return {"pullRequest": {"id": data["pullRequestId"], "number": issue.number, "isDraft": False}}


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
    values: JSON = {
        "id": node_id("R", repo.id),
        "nameWithOwner": repo.full_name,
        "databaseId": repo.id,
    }
    number = arg("number")
    if "pullRequest" in field.selection and number is not None:
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
        }
    return values


QUERIES = {"viewer": _viewer, "rateLimit": _rate_limit, "repository": _repository}
MUTATIONS = {
    "addPullRequestReview": _add_review,
    "markPullRequestReadyForReview": _ready_for_review,
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
                data[f.name] = type_name
                continue
            handler = table.get(f.name)
            if handler is None:
                raise GraphQLFailure(
                    f"Field '{f.name}' doesn't exist on type '{type_name}'", path=[op, f.name]
                )
            try:
                data[f.name] = _project(handler(ctx, f, variables), f.selection)
            except GraphQLFailure as err:
                data[f.name] = None
                errors.append(err.error)
    except GraphQLFailure as err:
        return Reply({"errors": [err.error]})
    body: JSON = {"data": data}
    if errors:
        body["errors"] = errors
    return Reply(body)


ROUTES = [Route("POST", "/graphql", graphql, resource="graphql")]
