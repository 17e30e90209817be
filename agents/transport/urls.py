"""Where an API's REST and GraphQL endpoints live: github.com, GitHub Enterprise, the sandbox."""

from __future__ import annotations

import re
from dataclasses import dataclass

import httpx

_GHES_REST = re.compile(r"/api/v3$")


@dataclass(frozen=True)
class ApiUrls:
    """``rest`` is the base every REST path joins; ``graphql`` the absolute GraphQL endpoint.

    GitHub Enterprise serves REST under ``/api/v3`` and GraphQL beside it at ``/api/graphql``;
    github.com (and anything else) serves GraphQL at ``<base>/graphql``.
    """

    rest: str
    graphql: str

    @property
    def web(self) -> str:
        """The origin of this GitHub's pages (``html_url`` links): github.com for its API host,
        the host of a GitHub Enterprise Server, the API's own origin otherwise (the sandbox)."""
        url = httpx.URL(self.rest)
        host = "github.com" if url.host == "api.github.com" else url.host
        port = f":{url.port}" if url.port else ""
        return f"{url.scheme}://{host}{port}"

    @classmethod
    def of(cls, api_url: str) -> ApiUrls:
        rest = api_url.rstrip("/")
        ghes, count = _GHES_REST.subn("/api/graphql", rest)
        return cls(rest=rest, graphql=ghes if count else f"{rest}/graphql")


def path_only(path_or_url: str) -> str:
    """The path of a URL for messages: no scheme, host or query string (which may hold ids)."""
    return httpx.URL(path_or_url).path or path_or_url
