"""What a request costs and which bucket it draws from, decided before it is sent.

A route template (``/repos/{owner}/{repo}/pulls/{pull_number}``) names the request in the audit
log without repeating ids; the concrete path is kept separately as the target.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.ratelimit.github.limits import ThrottleLimits

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

_R = "/repos/{owner}/{repo}"
# Documented route templates, most specific first; each placeholder matches by its kind below.
_ROUTES: tuple[str, ...] = (
    _R + "/pulls/{pull_number}/reviews/{review_id}/events",
    _R + "/pulls/{pull_number}/reviews/{review_id}/comments",
    _R + "/pulls/{pull_number}/reviews/{review_id}",
    _R + "/pulls/{pull_number}/reviews",
    _R + "/pulls/{pull_number}/comments/{comment_id}/replies",
    _R + "/pulls/{pull_number}/comments",
    _R + "/pulls/{pull_number}/files",
    _R + "/pulls/{pull_number}/commits",
    _R + "/pulls/{pull_number}/requested_reviewers",
    _R + "/pulls/{pull_number}/merge",
    _R + "/pulls/{pull_number}",
    _R + "/pulls",
    _R + "/issues/{issue_number}/comments",
    _R + "/issues/{issue_number}/labels/{name}",
    _R + "/issues/{issue_number}/labels",
    _R + "/issues/{issue_number}",
    _R + "/issues/comments/{comment_id}",
    _R + "/issues",
    _R + "/contents/{path}",
    _R + "/compare/{basehead}",
    _R + "/commits/{ref}",
    _R + "/labels",
    _R,
    "/installation/token",
    "/installation/repositories",
    "/app/installations/{installation_id}/access_tokens",
    "/app/hook/deliveries/{delivery_id}/attempts",
    "/app/hook/deliveries/{delivery_id}",
    "/app/hook/deliveries",
    "/app",
    "/rate_limit",
    "/graphql",
    "/search/{kind}",
    "/users/{username}",
    "/user",
)
_NUMERIC = frozenset(
    {"pull_number", "review_id", "comment_id", "issue_number", "installation_id", "delivery_id"}
)
_MAY_HOLD_SLASHES = frozenset({"path", "basehead"})  # file paths, base...head ranges
_PLACEHOLDER = re.compile(r"\\\{(\w+)\\\}")  # a {name} after re.escape


def _compile(template: str) -> re.Pattern[str]:
    def matcher(placeholder: re.Match[str]) -> str:
        name = placeholder.group(1)
        return r"\d+" if name in _NUMERIC else ".+" if name in _MAY_HOLD_SLASHES else "[^/]+"

    return re.compile(_PLACEHOLDER.sub(matcher, re.escape(template)) + "/?")


_COMPILED = tuple((_compile(template), template) for template in _ROUTES)
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
    *,
    is_mutation: bool,
    creates_content: bool,
    limits: ThrottleLimits | None = None,
    primary_cost: int = 1,
) -> RequestSpec:
    """A GraphQL call; primary cost as the policy states it, 1 when it does not (exact:
    ``rateLimit { cost }``)."""
    lim = limits or _DEFAULT_LIMITS
    return RequestSpec(
        method="POST",
        route="/graphql",
        target="/graphql",
        resource="graphql",
        primary_cost=primary_cost,
        points=lim.graphql_mutation_points if is_mutation else lim.graphql_query_points,
        is_write=is_mutation,
        is_content_creation=creates_content,
    )


_DEFAULT_LIMITS = ThrottleLimits()
