"""One identity's connection pools: kept alive across calls, one TLS context per process.

githubkit builds and closes an httpx client per call, and closing a client closes its transport:
that would tear a shared pool down under concurrent callers and open a new connection per call.
githubkit gets kept-open views; only :meth:`ConnectionPools.close` / ``aclose`` close the pools.
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


class _KeptOpen(httpx.BaseTransport):
    def __init__(self, inner: httpx.BaseTransport) -> None:
        self._inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self._inner.handle_request(request)

    def close(self) -> None:
        """Deliberately nothing: the pool outlives the per-call client."""


class _AsyncKeptOpen(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        """Deliberately nothing: the pool outlives the per-call client."""


class ConnectionPools:
    """A sync pool (identity calls run in threads) and an async one (the gateway), nothing
    taken from the host: ``trust_env=False`` means no proxy, CA or netrc settings from the
    environment. ``sync`` / ``async_`` replace the real pools (in-memory servers, timing)."""

    def __init__(
        self,
        *,
        max_connections: int = 100,
        sync: httpx.BaseTransport | None = None,
        async_: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        limits = httpx.Limits(max_connections=max_connections)
        self._sync = sync or httpx.HTTPTransport(
            verify=tls_context(), trust_env=False, limits=limits
        )
        self._async = async_ or httpx.AsyncHTTPTransport(
            verify=tls_context(), trust_env=False, limits=limits
        )
        self.sync_view: httpx.BaseTransport = _KeptOpen(self._sync)
        self.async_view: httpx.AsyncBaseTransport = _AsyncKeptOpen(self._async)

    def close(self) -> None:
        self._sync.close()

    async def aclose(self) -> None:
        await self._async.aclose()
        self._sync.close()
