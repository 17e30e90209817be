"""REST first: the few GraphQL operations the swarm may send, checked before anything goes out.

The check parses just enough of the document to see its operation type and selected fields, so an
alias or a comment cannot smuggle a field past the allow-list.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from agents.github.errors import GraphQLNotAllowed

ALLOWED_QUERY_FIELDS = frozenset({"viewer", "rateLimit", "__typename"})
# The mutations we send, each with its primary-limit cost: GitHub charges a mutation 1 point of
# the hourly GraphQL budget, and 5 secondary points a minute (``graphql_mutation_points``).
# ``resolveReviewThread`` has no REST route: a fixed finding's thread is closed with it.
MUTATION_COSTS: Mapping[str, int] = {
    "addPullRequestReview": 1,
    "markPullRequestReadyForReview": 1,
    "resolveReviewThread": 1,
    # The writer's commits (agents.github.commits): REST git-data commits are unsigned, these
    # are signed by GitHub as the App (anthropics/claude-code-action#1511).
    "createCommitOnBranch": 1,
}
ALLOWED_MUTATIONS = frozenset(MUTATION_COSTS)
# The identity check reads who the token is, nothing the viewer owns.
ALLOWED_VIEWER_FIELDS = frozenset({"login", "id", "databaseId", "__typename"})
CONTENT_MUTATIONS = frozenset({"addPullRequestReview"})
# Whether a review thread is resolved, and by whom, has no REST route: the one read allowed
# under `repository` is a pull request's `reviewThreads` (learning from resolved threads).
ALLOWED_REPOSITORY_FIELDS = frozenset({"pullRequest", "__typename"})
ALLOWED_PULL_REQUEST_FIELDS = frozenset({"reviewThreads", "__typename"})
# Discovery's listing (:mod:`agents.github.pull_listing`): the open PRs with their latest
# reviews, the default branch and one file on it, in one query a page. Over REST that is one
# listing plus one review read per PR and a contents read, all on the REST budget the workers
# need; this query reads, never writes, on the GraphQL budget.
LISTING_REPOSITORY_FIELDS = frozenset({"pullRequests", "defaultBranchRef", "object", "__typename"})

_R = "/repos/{owner}/{repo}"
_REPOSITORY_ROUTES = {
    "pullRequest": f"GET {_R}/pulls/{{pull_number}}",
    "pullRequests": f"GET {_R}/pulls",
    "issue": f"GET {_R}/issues/{{issue_number}}",
    "issues": f"GET {_R}/issues",
    "issueOrPullRequest": f"GET {_R}/issues/{{issue_number}}",
    "object": f"GET {_R}/contents/{{path}}",
    "labels": f"GET {_R}/labels",
    "ref": f"GET {_R}/git/ref/{{ref}}",
    "defaultBranchRef": f"GET {_R}",
}
_QUERY_ROUTES = {
    "repository": f"GET {_R}",
    "search": "GET /search/issues",
    "user": "GET /users/{username}",
    "organization": "GET /orgs/{org}",
    "rateLimit": "GET /rate_limit",
}
_MUTATION_ROUTES = {
    "addComment": f"POST {_R}/issues/{{issue_number}}/comments",
    "addLabelsToLabelable": f"POST {_R}/issues/{{issue_number}}/labels",
    "removeLabelsFromLabelable": f"DELETE {_R}/issues/{{issue_number}}/labels/{{name}}",
    "createIssue": f"POST {_R}/issues",
    "updateIssue": f"PATCH {_R}/issues/{{issue_number}}",
    "closeIssue": f"PATCH {_R}/issues/{{issue_number}}",
    "updatePullRequest": f"PATCH {_R}/pulls/{{pull_number}}",
    "closePullRequest": f"PATCH {_R}/pulls/{{pull_number}}",
    "mergePullRequest": f"PUT {_R}/pulls/{{pull_number}}/merge",
    "requestReviews": f"POST {_R}/pulls/{{pull_number}}/requested_reviewers",
    "submitPullRequestReview": f"POST {_R}/pulls/{{pull_number}}/reviews/{{review_id}}/events",
    "addPullRequestReviewComment": f"POST {_R}/pulls/{{pull_number}}/comments",
    "addPullRequestReviewThread": f"POST {_R}/pulls/{{pull_number}}/comments",
}

_TOKEN = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*"""'  # block string
    r'|"(?:[^"\\\n]|\\.)*"'  # string
    r"|#[^\n]*"  # comment
    r"|\.\.\."
    r"|[_A-Za-z][_0-9A-Za-z]*"
    r"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?"
    r"|[{}()\[\]:=@$!,&|]"
    r"|\s+"
)


@dataclass
class Field:
    name: str
    children: list[Field] = field(default_factory=list)


@dataclass(frozen=True)
class GraphQLOperation:
    """What the policy decided about a document that passed."""

    kind: str  # "query" or "mutation"
    fields: tuple[str, ...]
    creates_content: bool
    primary_cost: int = 1


def _tokens(document: str) -> list[str]:
    out: list[str] = []
    pos = 0
    while pos < len(document):
        match = _TOKEN.match(document, pos)
        if match is None:
            raise GraphQLNotAllowed(f"GraphQL document has an unexpected character at {pos}")
        text = match.group()
        pos = match.end()
        if text[0] in "#," or text.isspace():
            continue
        out.append(text)
    return out


class _Parser:
    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise GraphQLNotAllowed("GraphQL document ends early")
        self.pos += 1
        return token

    def skip_balanced(self, opening: str, closing: str) -> None:
        depth = 0
        while True:
            token = self.take()
            if token == opening:
                depth += 1
            elif token == closing:
                depth -= 1
                if depth == 0:
                    return

    def skip_directives(self) -> None:
        while self.peek() == "@":
            self.take()
            self.take()
            if self.peek() == "(":
                self.skip_balanced("(", ")")

    def selection_set(self) -> list[Field]:
        if self.take() != "{":
            raise GraphQLNotAllowed("GraphQL document: expected '{'")
        fields: list[Field] = []
        while self.peek() != "}":
            if self.peek() == "...":
                self.take()
                if self.peek() != "on":
                    raise GraphQLNotAllowed(
                        "GraphQL fragments are not allowed (REST-first policy): select fields"
                        " inline"
                    )
                # An inline fragment (``... on Blob { text }``) selects its fields where it
                # stands: they are checked as the enclosing field's own.
                self.take()
                self.take()
                self.skip_directives()
                fields.extend(self.selection_set())
                continue
            name = self.take()
            if self.peek() == ":":  # alias: the real field name follows
                self.take()
                name = self.take()
            if self.peek() == "(":
                self.skip_balanced("(", ")")
            self.skip_directives()
            children = self.selection_set() if self.peek() == "{" else []
            fields.append(Field(name, children))
        self.take()
        return fields


def parse_operation(document: str) -> tuple[str, list[Field]]:
    """The single operation in ``document``: its kind and its top-level fields."""
    parser = _Parser(_tokens(document))
    kind = "query"
    if parser.peek() in ("query", "mutation", "subscription"):
        kind = parser.take()
        if parser.peek() not in ("(", "{", "@", None):
            parser.take()  # operation name
        if parser.peek() == "(":
            parser.skip_balanced("(", ")")
        parser.skip_directives()
    elif parser.peek() == "fragment":
        raise GraphQLNotAllowed(
            "GraphQL fragments are not allowed (REST-first policy): select fields inline"
        )
    fields = parser.selection_set()
    if parser.peek() is not None:
        raise GraphQLNotAllowed("GraphQL document must hold exactly one operation")
    return kind, fields


def _refuse(kind: str, path: str, route: str | None) -> GraphQLNotAllowed:
    hint = f"use {route}" if route else "use the REST API"
    return GraphQLNotAllowed(
        f"GraphQL {kind} field '{path}' is not on the allow-list (REST-first policy): {hint}"
    )


def _review_threads_only(kind: str, repository: Field) -> bool:
    """True for `repository { pullRequest { reviewThreads ... } }` and nothing beside it;
    refuses a pull request or repository field that has a REST route, naming the route."""
    for child in repository.children:
        pull_fields = {c.name for c in child.children}
        if (
            child.name == "pullRequest"
            and pull_fields
            and pull_fields <= ALLOWED_PULL_REQUEST_FIELDS
        ):
            continue
        if child.name in _REPOSITORY_ROUTES:
            raise _refuse(kind, f"repository.{child.name}", _REPOSITORY_ROUTES[child.name])
        if child.name not in ALLOWED_REPOSITORY_FIELDS:
            return False
    return any(child.name == "pullRequest" for child in repository.children)


def _listing_only(repository: Field) -> bool:
    """True for discovery's `repository { pullRequests defaultBranchRef object }` listing, and
    for files at a commit (`repository { object ... }`, aliased once per file)."""
    names = {child.name for child in repository.children}
    return bool(names & {"pullRequests", "object"}) and names <= LISTING_REPOSITORY_FIELDS


def check_graphql(document: str) -> GraphQLOperation:
    """Allow the document or raise :class:`GraphQLNotAllowed` naming the REST route to use."""
    kind, fields = parse_operation(document)
    if kind == "subscription":
        raise GraphQLNotAllowed("GraphQL subscriptions are not allowed (REST-first policy)")
    if kind == "mutation":
        for f in fields:
            if f.name not in ALLOWED_MUTATIONS:
                raise _refuse(kind, f.name, _MUTATION_ROUTES.get(f.name))
        names = tuple(f.name for f in fields)
        cost = sum(MUTATION_COSTS[n] for n in names) or 1
        return GraphQLOperation(kind, names, any(n in CONTENT_MUTATIONS for n in names), cost)
    for f in fields:
        if f.name == "repository" and _listing_only(f):
            continue
        if f.name == "repository" and _review_threads_only(kind, f):
            continue
        if f.name not in ALLOWED_QUERY_FIELDS:
            raise _refuse(kind, f.name, _QUERY_ROUTES.get(f.name))
        if f.name == "viewer":
            for child in f.children:
                if child.name not in ALLOWED_VIEWER_FIELDS:
                    route = (
                        "GET /installation/repositories" if child.name == "repositories" else None
                    )
                    raise _refuse(kind, f"viewer.{child.name}", route)
    return GraphQLOperation(kind, tuple(f.name for f in fields), False)
