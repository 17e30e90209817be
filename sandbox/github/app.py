"""The FastAPI application over a SandboxState."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from sandbox.github import (
    graphql,
    routes_app,
    routes_feedback,
    routes_git,
    routes_hooks,
    routes_issues,
    routes_people,
    routes_pulls,
)
from sandbox.github.errors import DOCS
from sandbox.github.gate import register
from sandbox.github.manifests import add_manifest_pages
from sandbox.github.state import SandboxState
from sandbox.github.web import add_web_pages

# githubkit maps a GitHub Enterprise base ".../api/v3" to ".../api/graphql".
REST_PREFIXES = ("", "/api/v3")
GRAPHQL_PREFIXES = ("", "/api")


def create_app(state: SandboxState) -> FastAPI:
    app = FastAPI(title="sandbox GitHub", docs_url=None, redoc_url=None, openapi_url=None)
    # Feedback routes first: ``pulls/comments`` must not be read as ``pulls/{pull_number}``.
    rest = (
        routes_app.ROUTES
        + routes_hooks.ROUTES
        + routes_feedback.ROUTES
        + routes_git.ROUTES
        + routes_pulls.ROUTES
        + routes_issues.ROUTES
        + routes_people.ROUTES
    )
    register(app, state, rest, REST_PREFIXES)
    register(app, state, graphql.ROUTES, GRAPHQL_PREFIXES)
    # The html_url links the API hands out (review links in the run table) open a page.
    add_web_pages(app, state)
    # Making an App from a manifest (``swarm app create``), as github.com does it.
    add_manifest_pages(app, state, REST_PREFIXES)

    @app.exception_handler(404)
    async def unknown_route(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse(
            {"message": "Not Found", "documentation_url": DOCS, "status": "404"}, status_code=404
        )

    @app.exception_handler(405)
    async def wrong_method(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse(
            {"message": "Not Found", "documentation_url": DOCS, "status": "404"}, status_code=404
        )

    @app.get("/_codeload/{owner}/{repo}/legacy.tar.gz/{sha}")
    async def codeload(owner: str, repo: str, sha: str, token: str = "") -> Response:
        """The tarball redirect's target (routes_git.tarball): the link's code is the credential,
        good for one repository and commit until it lapses; anything else is GitHub's 404."""
        with state.lock:
            link = state.archive_links.get(token)
            found = state.find_repo(f"{owner}/{repo}")
            if (
                link is None
                or found is None
                or link[:2] != (found.full_name, sha)
                or state.clock.now() >= link[2]
            ):
                return JSONResponse({"message": "Not Found"}, status_code=404)
            data = routes_git.archive_bytes(found, found.commits[sha])
        return Response(data, media_type="application/x-gzip")

    app.state.sandbox = state
    return app
