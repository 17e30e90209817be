"""githubkit set up for one identity: its own token source, pool and cache, no auto-retry."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Generator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import httpx
from githubkit import GitHub
from githubkit.auth.base import BaseAuthStrategy
from githubkit.cache import MemCacheStrategy
from githubkit.throttling import BaseThrottler
from pydantic import SecretStr

from agents.github.errors import GitHubUnavailable

TokenProvider = Callable[[], "str | SecretStr"]


class MissingToken(GitHubUnavailable):
    """The token provider had nothing: fail loud, never fall back to another credential."""


class _ProviderAuth(httpx.Auth):
    """Reads the token at each request so a re-minted token is used without rebuilding."""

    def __init__(self, provider: TokenProvider, identity: str) -> None:
        self._provider = provider
        self._identity = identity

    def __repr__(self) -> str:
        return f"_ProviderAuth(identity={self._identity!r})"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        token = self._provider()
        value = token.get_secret_value() if isinstance(token, SecretStr) else token
        if not value:
            # Never fall back to any other credential.
            raise MissingToken(f"no token for identity {self._identity}")
        request.headers["Authorization"] = f"token {value}"
        yield request


class _ProviderAuthStrategy(BaseAuthStrategy):
    def __init__(self, provider: TokenProvider, identity: str) -> None:
        self._auth = _ProviderAuth(provider, identity)

    def __repr__(self) -> str:
        return "_ProviderAuthStrategy(<hidden>)"

    def get_auth_flow(self, github: Any) -> httpx.Auth:
        return self._auth


class _NoThrottler(BaseThrottler):
    """githubkit's throttler only caps concurrency; IdentityThrottle does that and more."""

    @contextmanager
    def acquire(self, request: httpx.Request) -> Generator[None, Any, Any]:
        yield

    @asynccontextmanager
    async def async_acquire(self, request: httpx.Request) -> AsyncGenerator[None, Any]:
        yield


class KeptOpenTransport(httpx.AsyncBaseTransport):
    """githubkit opens and closes a client per call; this keeps the pool alive across them."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        return None


def build_github(
    base_url: str,
    identity: str,
    token_provider: TokenProvider,
    transport: httpx.AsyncBaseTransport,
    timeout: float,
) -> GitHub[Any]:
    """A client that shares nothing with another identity's and leaves retries to us."""
    return GitHub(
        _ProviderAuthStrategy(token_provider, identity),
        base_url=base_url,
        timeout=timeout,
        trust_env=False,  # no netrc, no host credentials
        async_transport=KeptOpenTransport(transport),
        cache_strategy=MemCacheStrategy(),  # this identity's own, never the global one
        http_cache=False,
        throttler=_NoThrottler(),
        auto_retry=False,
    )
