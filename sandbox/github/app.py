"""The FastAPI application over a SandboxState."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from sandbox.github import (
    graphql,
    routes_app,
    routes_feedback,
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

    app.state.sandbox = state
    return app
