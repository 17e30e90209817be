"""The wrapper every route runs through: auth, failure injection, rate limits, repo
visibility, permissions, rate-limit headers and the request log."""

from __future__ import annotations

import asyncio
import json
import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from sandbox.github import conditional
from sandbox.github.auth import JWT_NOT_DECODED, Identity, bearer, identify
from sandbox.github.errors import ApiError, not_found
from sandbox.github.limits import Denial, Resource
from sandbox.github.model import Repo
from sandbox.github.records import Rendezvous
from sandbox.github.render import Urls
from sandbox.github.state import RecordedRequest, SandboxState

SECONDARY_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try "
    "again. If you reach out to GitHub Support for help, please include the request ID {rid}."
)
SECONDARY_DOCS = (
    "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
)
PRIMARY_DOCS = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
_MUTATION = re.compile(r"^\s*mutation\b")


@dataclass
class Reply:
    body: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    # Sent as it is with this media type (a raw file), not as JSON.
    media_type: str | None = None


@dataclass
class Ctx:
    state: SandboxState
    identity: Identity
    params: Mapping[str, str]
    query: Mapping[str, str]
    body: Any
    urls: Urls
    url: str
    repo: Repo | None
    now: float
    # The request's Accept header: GitHub's media types choose some answers' shape.
    accept: str = ""

    def require(self, *alternatives: tuple[str, str]) -> None:
        """Pass if the identity holds any one of (permission, level)."""
        if not any(self.identity.has(p, lvl) for p, lvl in alternatives):
            raise ApiError(403, self.identity.forbidden_message)

    @property
    def the_repo(self) -> Repo:
        assert self.repo is not None
        return self.repo


Handler = Callable[[Ctx], Reply]
AuthMode = Literal["jwt", "token", "installation"]


@dataclass
class Route:
    method: str
    template: str
    handler: Handler
    auth: AuthMode = "token"
    permission: tuple[str, str] | None = None
    resource: Resource = "core"
    content_creation: bool = False
    counted: bool = True

    @property
    def is_write(self) -> bool:
        return self.method not in ("GET", "HEAD")


def register(
    app: FastAPI, state: SandboxState, routes: list[Route], prefixes: tuple[str, ...]
) -> None:
    for route in routes:
        for prefix in prefixes:
            # Starlette needs ":path" to let a parameter span slashes (file paths, refs).
            path = prefix + route.template.replace("{path}", "{path:path}").replace(
                "{basehead}", "{basehead:path}"
            )
            app.add_api_route(path, _endpoint(state, route, prefix), methods=[route.method])


def _endpoint(state: SandboxState, route: Route, prefix: str) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        return await _serve(state, route, prefix, request)

    endpoint.__name__ = f"{route.method.lower()}_{route.template}"
    return endpoint


async def _serve(state: SandboxState, route: Route, prefix: str, request: Request) -> Response:
    web = str(request.base_url).rstrip("/")
    identity: Identity | None = None
    headers: dict[str, str] = {"x-github-request-id": secrets.token_hex(8).upper()}
    is_write, content = route.is_write, route.content_creation
    resource: Resource = route.resource
    # The limit that refused this request, if one did: the request log records it.
    denial: Denial | None = None
    entered = False
    body: Any = None
    try:
        body = await _json_body(request)
        if route.resource == "graphql":
            is_write = isinstance(body, dict) and bool(_MUTATION.match(str(body.get("query", ""))))
            content = is_write and "addPullRequestReview" in str(body.get("query", ""))
        with state.lock:
            path = request.url.path.removeprefix(prefix)
            failure = state.take_failure(route.method, route.template, path)
            credential = bearer(request.headers.get("authorization"))
            if credential is not None:
                identity = identify(state, credential)
        if failure is not None:
            raise ApiError(failure, "Server Error")
        if identity is None:
            raise ApiError(401, "Requires authentication")
        _check_auth_mode(route.auth, identity)
        with state.lock:
            denial = state.limiter.enter(identity.login)
        if denial is not None:
            raise _limit_error(state, identity, denial, resource)
        entered = True
        if state.knobs.latency_s > 0:
            await asyncio.sleep(state.knobs.latency_s)
        hold = state.knobs.hold
        while hold is not None and not hold.is_set():
            await asyncio.sleep(0.005)
        await _meet(state.knobs.rendezvous, route)
        with state.lock:
            now = state.clock.now()
            if route.counted:
                denial = state.limiter.charge(
                    identity.login,
                    resource,
                    now,
                    is_write=is_write,
                    content_creation=content,
                    graphql_mutation=is_write,
                )
                if denial is not None:
                    raise _limit_error(state, identity, denial, resource)
            repo = _visible_repo(state, identity, request.path_params)
            ctx = Ctx(
                state=state,
                identity=identity,
                params=request.path_params,
                query=request.query_params,
                body=body,
                urls=Urls(api=web + prefix if prefix != "/api" else web + "/api/v3", web=web),
                url=str(request.url),
                repo=repo,
                now=now,
                accept=request.headers.get("accept", ""),
            )
            if route.permission is not None:
                ctx.require(route.permission)
            reply = route.handler(ctx)
            if route.method == "GET" and reply.status == 200 and credential is not None:
                reply = _conditional(state, identity, resource, credential, request, reply)
            if reply.status < 400:
                lost = state.take_failure(route.method, route.template, path, after_handling=True)
                if lost is not None:
                    raise ApiError(lost, "Server Error")
    except ApiError as err:
        reply = Reply(err.body(), err.status, err.headers)
        if isinstance(err, _GraphQLLimited):
            reply = Reply(
                {"errors": [{"type": "RATE_LIMITED", "message": err.message}]}, 200, err.headers
            )
    finally:
        if entered and identity is not None:
            with state.lock:
                state.limiter.leave(identity.login)
    with state.lock:
        if (
            identity is not None
            and identity.token is not None
            and identity.token.scopes is not None
        ):
            # GitHub names a classic PAT's scopes on every answer to it.
            headers["x-oauth-scopes"] = ", ".join(identity.token.scopes)
        if identity is not None:
            status = state.limiter.status(identity.login, resource, state.clock.now())
            headers.update(
                {
                    "x-ratelimit-limit": str(status.limit),
                    "x-ratelimit-remaining": str(status.remaining),
                    "x-ratelimit-used": str(status.used),
                    "x-ratelimit-reset": str(status.reset),
                    "x-ratelimit-resource": status.resource,
                }
            )
        headers.update(reply.headers)
        # Reset times are on the sandbox clock; this lets a client with a fast clock convert them.
        headers["x-sandbox-now"] = f"{state.clock.now():.3f}"
        limited = denial.kind if denial is not None else None
        _record(state, route, request, identity, reply, is_write, content, resource, limited, body)
    if reply.status in (204, 304) or reply.body is None:
        return Response(status_code=reply.status, headers=headers)
    if reply.media_type is not None:
        return Response(
            reply.body, status_code=reply.status, headers=headers, media_type=reply.media_type
        )
    return JSONResponse(reply.body, status_code=reply.status, headers=headers)


def _conditional(
    state: SandboxState,
    identity: Identity,
    resource: Resource,
    credential: str,
    request: Request,
    reply: Reply,
) -> Reply:
    """The read's ETag; a 304 without a body (its primary point handed back) when the request's
    ``If-None-Match`` names it. Caller holds the lock."""
    etag = conditional.etag_of(credential, request.headers.get("accept", ""), reply.body)
    headers = {**reply.headers, "etag": etag, "vary": conditional.VARY}
    if conditional.matches(request.headers, etag):
        state.limiter.refund_primary(identity.login, resource, state.clock.now())
        return Reply(None, 304, headers)
    reply.headers = headers
    return reply


async def _meet(rendezvous: Rendezvous | None, route: Route) -> None:
    if rendezvous is None or not rendezvous.matches(route.method, route.template):
        return
    rendezvous.arrive()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + rendezvous.timeout_s
    while not rendezvous.complete() and loop.time() < deadline:
        await asyncio.sleep(0.005)
    if rendezvous.refuse is not None:
        raise ApiError(rendezvous.refuse, "Server Error")


async def _json_body(request: Request) -> Any:
    raw = await request.body()
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        raise ApiError(400, "Problems parsing JSON") from None


def _check_auth_mode(mode: AuthMode, identity: Identity) -> None:
    if mode == "jwt" and identity.kind != "app":
        raise ApiError(401, JWT_NOT_DECODED)
    if mode != "jwt" and identity.kind == "app":
        raise ApiError(403, "Resource not accessible by integration")
    if mode == "installation" and identity.kind != "installation":
        raise ApiError(403, identity.forbidden_message)


def _visible_repo(
    state: SandboxState, identity: Identity, params: Mapping[str, str]
) -> Repo | None:
    if "owner" not in params or "repo" not in params:
        return None
    repo = state.find_repo(f"{params['owner']}/{params['repo']}")
    # GitHub answers 404, not 403, for a repository the token was not given: it hides it.
    if repo is None or not identity.can_see(repo):
        raise not_found()
    return repo


class _GraphQLLimited(ApiError):
    pass


def _limit_error(
    state: SandboxState, identity: Identity, denial: Denial, resource: Resource
) -> ApiError:
    rid = secrets.token_hex(8).upper()
    if denial.kind == "secondary":
        headers = (
            {"retry-after": str(denial.retry_after)} if state.knobs.secondary_retry_after else {}
        )
        return ApiError(
            403,
            SECONDARY_MESSAGE.format(rid=rid),
            documentation_url=SECONDARY_DOCS,
            headers=headers,
        )
    if identity.kind == "installation" and identity.token and identity.token.installation_id:
        who = f"installation ID {identity.token.installation_id}"
    elif identity.kind == "app" and identity.app is not None:
        who = f"integration ID {identity.app.id}"
    else:
        user = state.users.get(identity.login)
        who = f"user ID {user.id if user else 0}"
    message = f"API rate limit exceeded for {who}."
    if resource == "graphql":
        return _GraphQLLimited(200, message, headers={"x-ratelimit-remaining": "0"})
    return ApiError(
        state.knobs.primary_limit_status,
        f"{message} If you reach out to GitHub Support for help, please include the "
        f"request ID {rid}.",
        documentation_url=PRIMARY_DOCS,
        headers={"x-ratelimit-remaining": "0"},
    )


def _record(
    state: SandboxState,
    route: Route,
    request: Request,
    identity: Identity | None,
    reply: Reply,
    is_write: bool,
    content: bool,
    resource: str,
    limited: Literal["primary", "secondary"] | None,
    sent: Any,
) -> None:
    keep = state.knobs.keep_bodies
    state.requests.append(
        RecordedRequest(
            at=state.clock.now(),
            login=identity.login if identity else None,
            method=route.method,
            route=route.template,
            path=request.url.path,
            status=reply.status,
            is_write=is_write,
            is_content_creation=content,
            resource=resource,
            limited=limited,
            body=reply.body if keep else None,
            media_type=reply.media_type if keep else None,
            sent=sent if keep else None,
        )
    )
