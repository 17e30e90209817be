"""App, installation, token, user and rate-limit endpoints."""

from __future__ import annotations

from sandbox.github import render
from sandbox.github.clock import iso
from sandbox.github.errors import ApiError, bad_credentials, not_found
from sandbox.github.gate import Ctx, Reply, Route
from sandbox.github.limits import Resource
from sandbox.github.tokens import MintRequest, mint


def get_app(ctx: Ctx) -> Reply:
    app = ctx.identity.app
    assert app is not None
    owner = ctx.state.users[app.owner_login]
    return Reply(render.app(ctx.urls, app, owner, ctx.state.clock.now() - 86400 * 30))


def list_installations(ctx: Ctx) -> Reply:
    app = ctx.identity.app
    assert app is not None
    found = [i for i in ctx.state.installations.values() if i.app_id == app.id]
    return Reply(
        [render.installation(ctx.urls, i, ctx.state.users[i.account_login]) for i in found]
    )


def create_token(ctx: Ctx) -> Reply:
    app = ctx.identity.app
    assert app is not None
    try:
        inst = ctx.state.installations[int(ctx.params["installation_id"])]
    except (KeyError, ValueError):
        raise not_found() from None
    if inst.app_id != app.id:
        raise not_found()
    token, repos = mint(ctx.state, inst.id, MintRequest.from_body(ctx.body))
    selection = "all" if not _scoped(ctx) else "selected"
    assert token.expires_at is not None
    return Reply(
        {
            "token": token.value,
            "expires_at": iso(token.expires_at),
            "permissions": token.permissions,
            "repository_selection": selection,
            "repositories": [render.repo(ctx.urls, r, ctx.now) for r in repos],
        },
        status=201,
    )


def _scoped(ctx: Ctx) -> bool:
    body = ctx.body if isinstance(ctx.body, dict) else {}
    return bool(body.get("repositories") or body.get("repository_ids"))


def revoke_token(ctx: Ctx) -> Reply:
    token = ctx.identity.token
    if token is None:
        raise bad_credentials()
    token.revoked = True
    return Reply(None, status=204)


def installation_repositories(ctx: Ctx) -> Reply:
    token = ctx.identity.token
    assert token is not None
    repos = [
        r
        for r in ctx.state.repos.values()
        if token.repository_ids is None or r.id in token.repository_ids
    ]
    repos.sort(key=lambda r: r.full_name)
    per_page, page = _paging(ctx)
    chunk = repos[(page - 1) * per_page : page * per_page]
    return Reply(
        {
            "total_count": len(repos),
            "repository_selection": "selected",
            "repositories": [render.repo(ctx.urls, r, ctx.now) for r in chunk],
        }
    )


def _paging(ctx: Ctx) -> tuple[int, int]:
    try:
        per_page = min(100, max(1, int(ctx.query.get("per_page", "30"))))
        page = max(1, int(ctx.query.get("page", "1")))
    except ValueError:
        raise ApiError(422, "Invalid request.\n\nper_page and page must be integers.") from None
    return per_page, page


def authenticated_user(ctx: Ctx) -> Reply:
    if ctx.identity.kind != "user":
        raise ApiError(
            403,
            "Resource not accessible by integration",
            documentation_url="https://docs.github.com/rest/users/users#get-the-authenticated-user",
        )
    user = ctx.state.users[ctx.identity.login]
    return Reply(render.private_user(ctx.urls, user, ctx.state.clock.now() - 86400 * 365))


def rate_limit(ctx: Ctx) -> Reply:
    limiter, login = ctx.state.limiter, ctx.identity.login
    resources: dict[str, dict[str, int | str]] = {}
    names: tuple[Resource, ...] = ("core", "graphql", "search")
    for name in names:
        s = limiter.status(login, name, ctx.now)
        resources[name] = {
            "limit": s.limit,
            "remaining": s.remaining,
            "reset": s.reset,
            "used": s.used,
            "resource": name,
        }
    return Reply({"resources": resources, "rate": resources["core"]})


ROUTES = [
    Route("GET", "/app", get_app, auth="jwt"),
    Route("GET", "/app/installations", list_installations, auth="jwt"),
    Route("POST", "/app/installations/{installation_id}/access_tokens", create_token, auth="jwt"),
    Route("DELETE", "/installation/token", revoke_token, auth="installation"),
    Route("GET", "/installation/repositories", installation_repositories, auth="installation"),
    Route("GET", "/user", authenticated_user),
    # GitHub does not count /rate_limit against the limit.
    Route("GET", "/rate_limit", rate_limit, counted=False),
]
