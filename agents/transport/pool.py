"""One identity's connection pool: kept alive across calls, one TLS context per process.

githubkit builds and closes an httpx client per call, and closing a client closes its transport:
that would tear a shared pool down under concurrent callers and open a new connection per call.
githubkit gets a kept-open view; only :meth:`ConnectionPool.aclose` closes the pool.
"""

from __future__ import annotations

import functools
import ssl

import certifi
import httpx


@functools.cache
def tls_context() -> ssl.SSLContext:
    # Loading the CA bundle costs 60-250 ms; the context holds no identity state, so one per
    # process serves every pool.
    return ssl.create_default_context(cafile=certifi.where())


class _KeptOpen(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        """Deliberately nothing: the pool outlives the per-call client."""


class ConnectionPool:
    """The pool every call of the identity goes through (the gateway's and the identity layer's,
    all on the event loop), nothing taken from the host: ``trust_env=False`` means no proxy, CA
    or netrc settings from the environment. ``pool`` replaces the real one (in-memory servers,
    timing)."""

    def __init__(
        self, *, max_connections: int = 100, pool: httpx.AsyncBaseTransport | None = None
    ) -> None:
        limits = httpx.Limits(max_connections=max_connections)
        self._pool = pool or httpx.AsyncHTTPTransport(
            verify=tls_context(), trust_env=False, limits=limits
        )
        self.view: httpx.AsyncBaseTransport = _KeptOpen(self._pool)

    async def aclose(self) -> None:
        await self._pool.aclose()
