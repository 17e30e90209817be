"""What a request costs and which bucket it draws from, decided before it is sent.

A route template (``/repos/{owner}/{repo}/pulls/{pull_number}``) names the request in the audit
log without repeating ids; the concrete path is kept separately as the target.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.github.limits import ThrottleLimits

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

_R = "/repos/{owner}/{repo}"
# Most specific first; ``.+`` segments (file paths, base...head) may contain slashes.
_ROUTES: tuple[tuple[str, str], ...] = (
    (
        r"/repos/[^/]+/[^/]+/pulls/\d+/reviews/\d+/events",
        _R + "/pulls/{pull_number}/reviews/{review_id}/events",
    ),
    (
        r"/repos/[^/]+/[^/]+/pulls/\d+/reviews/\d+/comments",
        _R + "/pulls/{pull_number}/reviews/{review_id}/comments",
    ),
    (r"/repos/[^/]+/[^/]+/pulls/\d+/reviews/\d+", _R + "/pulls/{pull_number}/reviews/{review_id}"),
    (r"/repos/[^/]+/[^/]+/pulls/\d+/reviews", _R + "/pulls/{pull_number}/reviews"),
    (
        r"/repos/[^/]+/[^/]+/pulls/\d+/comments/\d+/replies",
        _R + "/pulls/{pull_number}/comments/{comment_id}/replies",
    ),
    (r"/repos/[^/]+/[^/]+/pulls/\d+/comments", _R + "/pulls/{pull_number}/comments"),
    (r"/repos/[^/]+/[^/]+/pulls/\d+/files", _R + "/pulls/{pull_number}/files"),
    (r"/repos/[^/]+/[^/]+/pulls/\d+/commits", _R + "/pulls/{pull_number}/commits"),
    (
        r"/repos/[^/]+/[^/]+/pulls/\d+/requested_reviewers",
        _R + "/pulls/{pull_number}/requested_reviewers",
    ),
    (r"/repos/[^/]+/[^/]+/pulls/\d+/merge", _R + "/pulls/{pull_number}/merge"),
    (r"/repos/[^/]+/[^/]+/pulls/\d+", _R + "/pulls/{pull_number}"),
    (r"/repos/[^/]+/[^/]+/pulls", _R + "/pulls"),
    (r"/repos/[^/]+/[^/]+/issues/\d+/comments", _R + "/issues/{issue_number}/comments"),
    (r"/repos/[^/]+/[^/]+/issues/\d+/labels/[^/]+", _R + "/issues/{issue_number}/labels/{name}"),
    (r"/repos/[^/]+/[^/]+/issues/\d+/labels", _R + "/issues/{issue_number}/labels"),
    (r"/repos/[^/]+/[^/]+/issues/\d+", _R + "/issues/{issue_number}"),
    (r"/repos/[^/]+/[^/]+/issues/comments/\d+", _R + "/issues/comments/{comment_id}"),
    (r"/repos/[^/]+/[^/]+/issues", _R + "/issues"),
    (r"/repos/[^/]+/[^/]+/contents/.+", _R + "/contents/{path}"),
    (r"/repos/[^/]+/[^/]+/compare/.+", _R + "/compare/{basehead}"),
    (r"/repos/[^/]+/[^/]+/commits/[^/]+", _R + "/commits/{ref}"),
    (r"/repos/[^/]+/[^/]+/labels", _R + "/labels"),
    (r"/repos/[^/]+/[^/]+", _R),
    (r"/installation/token", "/installation/token"),
    (r"/installation/repositories", "/installation/repositories"),
    (r"/app/installations/\d+/access_tokens", "/app/installations/{installation_id}/access_tokens"),
    (r"/app", "/app"),
    (r"/rate_limit", "/rate_limit"),
    (r"/graphql", "/graphql"),
    (r"/search/[^/]+", "/search/{kind}"),
    (r"/users/[^/]+", "/users/{username}"),
    (r"/user", "/user"),
)
_COMPILED = tuple((re.compile(pattern + r"/?"), template) for pattern, template in _ROUTES)
_NUMBER_SEGMENT = re.compile(r"/\d+(?=/|$)")

# POSTs to these collections create content GitHub counts against its content-creation limits.
_CONTENT_SUFFIXES = (
    "/comments",
    "/reviews",
    "/issues",
    "/pulls",
    "/replies",
    "/releases",
    "/discussions",
)


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """One request as the throttle sees it."""

    method: str
    route: str
    target: str
    resource: str
    primary_cost: int
    points: int
    is_write: bool
    is_content_creation: bool


def route_template(path: str) -> str:
    """The documented route a concrete path belongs to; unknown paths get numeric ids masked."""
    clean = "/" + path.split("?", 1)[0].strip("/")
    for pattern, template in _COMPILED:
        if pattern.fullmatch(clean):
            return template
    return _NUMBER_SEGMENT.sub("/{id}", clean)


def resource_for(path: str) -> str:
    clean = "/" + path.split("?", 1)[0].strip("/")
    if clean == "/graphql":
        return "graphql"
    if clean.startswith("/search/code"):
        return "code_search"
    if clean.startswith("/search/"):
        return "search"
    return "core"


def classify_rest(method: str, path: str, limits: ThrottleLimits | None = None) -> RequestSpec:
    """Classify a REST call; ``/graphql`` goes through :func:`classify_graphql`."""
    lim = limits or _DEFAULT_LIMITS
    verb = method.upper()
    if verb not in READ_METHODS and verb not in WRITE_METHODS:
        raise ValueError(f"unsupported HTTP method {method!r} for {path!r}")
    route = route_template(path)
    is_write = verb in WRITE_METHODS
    content = verb == "POST" and route.endswith(_CONTENT_SUFFIXES)
    # GitHub documents that GET /rate_limit does not count against the primary limit.
    primary = 0 if route == "/rate_limit" else 1
    return RequestSpec(
        method=verb,
        route=route,
        target="/" + path.split("?", 1)[0].strip("/"),
        resource=resource_for(path),
        primary_cost=primary,
        points=0 if primary == 0 else lim.write_points if is_write else lim.read_points,
        is_write=is_write,
        is_content_creation=content,
    )


def classify_graphql(
    *, is_mutation: bool, creates_content: bool, limits: ThrottleLimits | None = None
) -> RequestSpec:
    """A GraphQL call; primary cost estimated at 1 (exact: ``rateLimit { cost }``)."""
    lim = limits or _DEFAULT_LIMITS
    return RequestSpec(
        method="POST",
        route="/graphql",
        target="/graphql",
        resource="graphql",
        primary_cost=1,
        points=lim.graphql_mutation_points if is_mutation else lim.graphql_query_points,
        is_write=is_mutation,
        is_content_creation=creates_content,
    )


_DEFAULT_LIMITS = ThrottleLimits()
