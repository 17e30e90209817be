"""One isolated HTTP client per identity, over githubkit, that never borrows from the host.

githubkit's default cache strategy is a process-wide singleton, so two identities sharing it can
be served each other's cached responses. Each client here gets its own cache strategy, no HTTP
cache at all (identity answers must be fresh), ``trust_env=False`` (no proxy or CA settings from
the environment; httpx 0.28 never reads ``.netrc`` on its own) and no automatic retry: a retried
mint could leave an orphan token behind.
"""

from __future__ import annotations

import functools
import re
import ssl
from dataclasses import dataclass
from typing import Any

import certifi
import httpx
from githubkit import GitHub
from githubkit.cache import MemCacheStrategy
from githubkit.exception import RequestError, RequestFailed
from pydantic import SecretStr

from agents.identity.errors import IdentityError

USER_AGENT = "swarm-identity"


class GitHubUnreachable(IdentityError):
    """The API could not be reached at all (no HTTP status to judge)."""


@dataclass(frozen=True)
class ApiReply:
    """Status, headers and decoded JSON body of one call. Never holds request credentials."""

    status: int
    headers: httpx.Headers
    body: Any

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def github_message(self) -> str:
        """GitHub's own words for an error, for messages (``message`` field or the status)."""
        if isinstance(self.body, dict) and isinstance(self.body.get("message"), str):
            return f"{self.status} {self.body['message'][:200]}"
        return str(self.status)


def graphql_url(api_url: str) -> str:
    """Where GraphQL lives: ``/graphql`` on github.com, ``/api/graphql`` for GHES ``/api/v3``."""
    base = api_url.rstrip("/")
    ghes, count = re.subn(r"/api/v3$", "/api/graphql", base)
    return ghes if count else f"{base}/graphql"


class _KeepOpen(httpx.BaseTransport):
    """githubkit builds and closes an httpx client per call, and closing a client closes its
    transport: that would tear the shared pool down under concurrent callers. Only
    :meth:`IdentityHttp.close` closes the real one."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self._inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self._inner.handle_request(request)

    def close(self) -> None:
        """Deliberately nothing."""


class IdentityHttp:
    """Raw REST/GraphQL calls for the identity layer, with the credential passed per call."""

    def __init__(
        self,
        api_url: str,
        *,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        # One pooled transport per identity: connections are reused across calls without a
        # fresh SSL context per request, and nothing is shared with another identity.
        self._transport = transport or httpx.HTTPTransport(verify=_tls_context(), trust_env=False)
        self._github = GitHub(
            base_url=self.api_url,
            user_agent=USER_AGENT,
            timeout=timeout,
            trust_env=False,
            transport=_KeepOpen(self._transport),
            cache_strategy=MemCacheStrategy(),
            http_cache=False,
            auto_retry=False,
        )

    def __repr__(self) -> str:
        return f"IdentityHttp({self.api_url!r})"

    def close(self) -> None:
        self._transport.close()

    def call(
        self,
        method: str,
        path_or_url: str,
        *,
        authorization: SecretStr,
        json: Any | None = None,
    ) -> ApiReply:
        headers = {
            "Authorization": authorization.get_secret_value(),
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
        }
        try:
            response = self._github.request(method, path_or_url, headers=headers, json=json)
            raw = response.raw_response
        except RequestFailed as failed:
            raw = failed.response.raw_response
        except RequestError as exc:
            # The wrapped httpx error holds the request (and its Authorization header): keep
            # only its type name and drop the chain.
            origin = type(getattr(exc, "exc", exc)).__name__
            raise GitHubUnreachable(
                f"cannot reach {self.api_url} for {method} {_path_only(path_or_url)}: {origin}"
            ) from None
        try:
            body: Any = raw.json() if raw.content else None
        except ValueError:
            body = None
        return ApiReply(status=raw.status_code, headers=raw.headers, body=body)


@functools.cache
def _tls_context() -> ssl.SSLContext:
    # Loading the CA bundle costs ~0.25 s; the context holds no credentials, so one per process.
    return ssl.create_default_context(cafile=certifi.where())


def _path_only(path_or_url: str) -> str:
    return httpx.URL(path_or_url).path or path_or_url


def bearer(secret: SecretStr) -> SecretStr:
    return SecretStr(f"Bearer {secret.get_secret_value()}")


def token_auth(secret: SecretStr) -> SecretStr:
    return SecretStr(f"token {secret.get_secret_value()}")
