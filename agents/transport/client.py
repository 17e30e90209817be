"""githubkit set up for one identity, and the one place GitHub HTTP failures are translated.

Every identity gets its own githubkit configuration: its own cache strategy (githubkit's default
is a process-wide singleton, so two identities sharing it could be served each other's cached
answers), no HTTP cache (answers must be fresh: ETags would cross identities), no automatic retry
(a retried mint leaves an orphan token; the gateway's throttle decides about retries), no
githubkit throttler (ours does more) and ``trust_env=False``. The credential is chosen per call by
an auth strategy, so the identity layer (App JWT, then installation tokens) and the gateway (the
worker's token) share one code path.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import TypedDict, Unpack

import httpx
from githubkit import GitHub
from githubkit.cache import MemCacheStrategy
from githubkit.config import Config, get_config
from githubkit.exception import RequestError, RequestFailed, RequestTimeout
from githubkit.throttling import BaseThrottler

from agents.transport.auth import CredentialAuth
from agents.transport.errors import (
    CredentialRefused,
    FailureKind,
    GitHubUnreachable,
    TransportError,
)
from agents.transport.pool import ConnectionPool
from agents.transport.urls import ApiUrls, path_only

USER_AGENT = "swarm"
API_VERSION = "2022-11-28"


class CallOptions(TypedDict, total=False):
    params: Mapping[str, str | int] | None
    # Passed through to httpx, which encodes it: a request body the caller built.
    json: object
    headers: Mapping[str, str] | None


class _NoThrottler(BaseThrottler):
    """githubkit's throttler only caps concurrency; the gateway's IdentityThrottle does more."""

    @contextmanager
    def acquire(self, request: httpx.Request) -> Generator[None, None, None]:
        yield

    @asynccontextmanager
    async def async_acquire(self, request: httpx.Request) -> AsyncGenerator[None, None]:
        yield


_NO_THROTTLER = _NoThrottler()


class GitHubTransport:
    """REST and GraphQL calls for one identity (or one verifier), on the event loop.

    Statuses are not judged here: an error status is an answer like any other, returned as the
    ``httpx.Response``. Only "no answer at all" raises, as :class:`GitHubUnreachable`.
    """

    def __init__(
        self,
        api_url: str,
        *,
        identity: str,
        timeout: float = 30.0,
        max_connections: int = 100,
        pool: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.urls = ApiUrls.of(api_url)
        self.identity = identity
        self._pool = ConnectionPool(max_connections=max_connections, pool=pool)
        self._config: Config = get_config(
            base_url=self.urls.rest,
            user_agent=USER_AGENT,
            timeout=timeout,
            trust_env=False,
            async_transport=self._pool.view,
            cache_strategy=MemCacheStrategy(),
            http_cache=False,
            throttler=_NO_THROTTLER,
            auto_retry=False,
        )

    def __repr__(self) -> str:
        return f"GitHubTransport({self.urls.rest!r}, identity={self.identity!r})"

    def client(self, auth: CredentialAuth) -> GitHub[CredentialAuth]:
        """A githubkit client over this transport's pools and configuration, as ``auth``."""
        return GitHub(auth, config=self._config)

    async def asend(
        self, method: str, url: str, *, auth: CredentialAuth, **options: Unpack[CallOptions]
    ) -> httpx.Response:
        """One call; ``url`` is a path under the REST base or an absolute URL."""
        params, headers = options.get("params"), options.get("headers")
        call = self.client(auth).arequest(
            method,
            url,
            params=dict(params) if params else None,
            json=options.get("json"),
            headers={"X-GitHub-Api-Version": API_VERSION, **(headers or {})},
        )
        try:
            return (await call).raw_response
        except RequestFailed as failed:
            return failed.response.raw_response
        except RequestError as exc:
            failure = self._failure(exc, method, url)
        raise failure  # outside the handler: no chained httpx error (it holds the request)

    async def aclose(self) -> None:
        await self._pool.aclose()

    def _failure(self, exc: RequestError[Exception], method: str, url: str) -> TransportError:
        inner = exc.exc
        if isinstance(inner, CredentialRefused):
            return CredentialRefused(str(inner))
        kind: FailureKind = "timed out" if isinstance(exc, RequestTimeout) else "could not connect"
        origin = type(inner).__name__
        return GitHubUnreachable(
            f"cannot reach {self.urls.rest} for {method} {path_only(url)}: {origin}",
            kind=kind,
            origin=origin,
        )
