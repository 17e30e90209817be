"""The only path from workers to GitHub: one gateway per identity over githubkit.

Every call is classified (resource, cost, write, content creation), waits for the identity's
throttle, goes out with this identity's own token and connection pool (no HTTP cache, nothing
shared with another identity), and its answer's rate-limit headers go back into the buckets.
githubkit's own throttler and auto-retry are switched off: the throttle decides.
"""

from __future__ import annotations

import base64
import copy
import logging
import re
import time
from collections.abc import AsyncGenerator, Callable, Generator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import Any
from urllib.parse import quote

import httpx
from githubkit import GitHub
from githubkit.auth.base import BaseAuthStrategy
from githubkit.cache import MemCacheStrategy
from githubkit.exception import RequestError, RequestFailed, RequestTimeout
from githubkit.throttling import BaseThrottler
from pydantic import SecretStr
from tenacity import (
    AsyncRetrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential_jitter,
)

from agents.github.errors import GitHubApiError, GitHubUnavailable, IdentityPaused
from agents.github.graphql_policy import check_graphql
from agents.github.records import CallObserver, GitHubCallRecord
from agents.github.requests import RequestSpec, classify_graphql, classify_rest
from agents.github.snapshot import IdentitySnapshot
from agents.github.throttle import IdentityThrottle, Permit

log = logging.getLogger(__name__)

TokenProvider = Callable[[], "str | SecretStr"]
_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
REVIEW_EVENTS = frozenset({"COMMENT", "APPROVE", "REQUEST_CHANGES"})


class _MissingToken(GitHubUnavailable):
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
            raise _MissingToken(f"no token for identity {self._identity}")
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


class _KeptOpenTransport(httpx.AsyncBaseTransport):
    """githubkit opens and closes a client per call; this keeps the pool alive across them."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        return None


class _Transient(Exception):
    """A 5xx or a timeout worth another try."""

    def __init__(self, description: str, status: int | None) -> None:
        super().__init__(description)
        self.status = status


def _repo(repo: str) -> str:
    if not _REPO.fullmatch(repo):
        raise ValueError(f"repo must look like 'owner/name', got {repo!r}")
    return repo


def _message(response: httpx.Response) -> str | None:
    try:
        body = response.json()
    except ValueError:
        return response.text[:200] or None
    if isinstance(body, Mapping):
        message = body.get("message")
        return str(message) if message is not None else None
    return None


def _graphql_rate_limited(response: httpx.Response) -> bool:
    try:
        body = response.json()
    except ValueError:
        return False
    errors = body.get("errors") if isinstance(body, Mapping) else None
    return isinstance(errors, list) and any(
        isinstance(e, Mapping) and e.get("type") == "RATE_LIMITED" for e in errors
    )


def _graphql_cost(response: httpx.Response | None, estimate: int) -> int:
    """The exact cost when the query asked for ``rateLimit { cost }``, else the estimate."""
    if response is None or response.is_error:
        return estimate
    try:
        cost = response.json()["data"]["rateLimit"]["cost"]
    except (ValueError, KeyError, TypeError):
        return estimate
    return int(cost) if isinstance(cost, int) else estimate


class GitHubGateway:
    def __init__(
        self,
        base_url: str,
        identity: str,
        token_provider: TokenProvider,
        throttle: IdentityThrottle,
        *,
        on_call: CallObserver | None = None,
        worker_id: str = "default",
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 30.0,
    ) -> None:
        if throttle.identity != identity:
            raise ValueError(
                f"throttle belongs to {throttle.identity!r}, not to identity {identity!r}"
            )
        self.identity = identity
        self.throttle = throttle
        self.worker_id = worker_id
        self.on_call = on_call
        self._transport = transport or httpx.AsyncHTTPTransport(
            limits=httpx.Limits(max_connections=throttle.limits.max_concurrency)
        )
        self._github = GitHub(
            _ProviderAuthStrategy(token_provider, identity),
            base_url=base_url,
            timeout=timeout,
            trust_env=False,  # no netrc, no host credentials
            async_transport=_KeptOpenTransport(self._transport),
            cache_strategy=MemCacheStrategy(),  # this identity's own, never the global one
            http_cache=False,
            throttler=_NoThrottler(),
            auto_retry=False,
        )

    def __repr__(self) -> str:
        return f"GitHubGateway(identity={self.identity!r}, worker_id={self.worker_id!r})"

    def for_worker(self, worker_id: str) -> GitHubGateway:
        """The same gateway (client, throttle, pool) acting on behalf of ``worker_id``."""
        view = copy.copy(self)
        view.worker_id = worker_id
        return view

    async def aclose(self) -> None:
        await self._transport.aclose()

    async def __aenter__(self) -> GitHubGateway:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()

    # -- the one request path -----------------------------------------------------------------
    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        safe_to_retry: bool | None = None,
        spec: RequestSpec | None = None,
    ) -> httpx.Response:
        """Send one REST call through the throttle; raises on an error status.

        Reads retry on 5xx/timeouts; writes only when ``safe_to_retry`` (repeating it does no
        harm). A rate-limit answer is retried after its pause, never sooner; a pause longer than
        ``max_inline_wait`` raises :class:`IdentityPaused`.
        """
        if spec is None:
            if path.rstrip("/").endswith("/graphql") or path.strip("/") == "graphql":
                raise ValueError("GraphQL goes through GitHubGateway.graphql(), not request()")
            spec = classify_rest(method, path, self.throttle.limits)
        lim = self.throttle.limits
        retry_transient = safe_to_retry if spec.is_write else (safe_to_retry is not False)
        attempts = 1 + (lim.max_transient_retries if retry_transient else 0)
        retrying = AsyncRetrying(
            stop=stop_after_attempt(attempts),
            wait=wait_exponential_jitter(
                initial=lim.transient_backoff_initial, max=lim.transient_backoff_max
            ),
            retry=retry_if_exception_type(_Transient),
            sleep=self.throttle.clock.sleep,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    number = attempt.retry_state.attempt_number
                    return await self._through_pauses(spec, number, params, json, headers)
        except _Transient as exc:
            if exc.status is not None:
                raise GitHubApiError(exc.status, spec.method, spec.route, str(exc)) from None
            raise GitHubUnavailable(f"GitHub {spec.method} {spec.route}: {exc}") from None
        raise AssertionError("unreachable")  # pragma: no cover

    async def _through_pauses(
        self,
        spec: RequestSpec,
        attempt: int,
        params: Mapping[str, Any] | None,
        json: Any,
        headers: Mapping[str, str] | None,
    ) -> httpx.Response:
        rate_limited = 0
        while True:
            permit = await self.throttle.acquire(self.worker_id, spec)
            response, duration_ms = await self._send_once(permit, attempt, params, json, headers)
            graphql_limited = spec.resource == "graphql" and _graphql_rate_limited(response)
            message = _message(response) if response.is_error else None
            pause = await self.throttle.complete(
                permit,
                response.status_code,
                response.headers,
                message=message,
                graphql_rate_limited=graphql_limited,
            )
            self._record(permit, attempt, response, None, duration_ms)
            if pause is not None:
                rate_limited += 1
                if (
                    self.throttle.should_report(pause)
                    or rate_limited > self.throttle.limits.max_rate_limit_retries
                ):
                    raise self.throttle.pause_error(pause)
                continue  # acquire() holds the request until the pause is over
            if response.status_code >= 500:
                raise _Transient(
                    f"{response.status_code} {message or ''}".strip(), response.status_code
                )
            if response.is_error:
                raise GitHubApiError(
                    response.status_code, spec.method, spec.route, message or response.reason_phrase
                )
            return response

    async def _send_once(
        self,
        permit: Permit,
        attempt: int,
        params: Mapping[str, Any] | None,
        json: Any,
        headers: Mapping[str, str] | None,
    ) -> tuple[httpx.Response, float]:
        spec = permit.spec
        started = time.perf_counter()
        try:
            result = await self._github.arequest(
                spec.method,
                spec.target,
                params=dict(params) if params else None,
                json=json,
                headers=dict(headers) if headers else None,
            )
            return result.raw_response, (time.perf_counter() - started) * 1000
        except RequestFailed as exc:
            return exc.response.raw_response, (time.perf_counter() - started) * 1000
        except (RequestTimeout, RequestError) as exc:
            await self.throttle.abandon(permit)
            if isinstance(exc.exc, _MissingToken):
                raise exc.exc from None
            kind = "timed out" if isinstance(exc, RequestTimeout) else "could not connect"
            self._record(permit, attempt, None, kind, (time.perf_counter() - started) * 1000)
            raise _Transient(kind, None) from None
        except BaseException:
            await self.throttle.abandon(permit)
            raise

    def _record(
        self,
        permit: Permit,
        attempt: int,
        response: httpx.Response | None,
        error: str | None,
        duration_ms: float,
    ) -> None:
        if self.on_call is None:
            return
        spec = permit.spec
        remaining = response.headers.get("x-ratelimit-remaining") if response is not None else None
        record = GitHubCallRecord(
            identity=self.identity,
            worker_id=permit.worker_id,
            method=spec.method,
            route=spec.route,
            target=spec.target,
            status=response.status_code if response is not None else None,
            is_write=spec.is_write,
            is_content_creation=spec.is_content_creation,
            resource=spec.resource,
            cost=_graphql_cost(response, spec.points)
            if spec.resource == "graphql"
            else spec.points,
            rate_limit_remaining=int(remaining) if remaining and remaining.isdigit() else None,
            started_at=permit.granted_at,
            duration_ms=duration_ms,
            waited_ms=permit.waited * 1000,
            attempt=attempt,
            error=error,
        )
        try:
            self.on_call(record)
        except Exception:
            # The call already happened; a broken audit sink must not make it look failed.
            log.exception("GitHub call observer failed for %s %s", spec.method, spec.route)

    # -- helpers over request() ---------------------------------------------------------------
    async def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        response = await self.request(method, path, **kwargs)
        return response.json() if response.content else None

    async def _paged(
        self, path: str, params: Mapping[str, Any] | None = None, *, max_pages: int = 30
    ) -> list[dict[str, Any]]:
        per_page = 100
        items: list[dict[str, Any]] = []
        for page in range(1, max_pages + 1):
            response = await self.request(
                "GET", path, params={**(params or {}), "per_page": per_page, "page": page}
            )
            batch = response.json()
            if not isinstance(batch, list):
                raise GitHubApiError(response.status_code, "GET", path, "expected a JSON list")
            items.extend(batch)
            if len(batch) < per_page or "next" not in response.links:
                break
        return items

    # -- what the tools call ------------------------------------------------------------------
    async def get_pull(self, repo: str, number: int) -> dict[str, Any]:
        result: dict[str, Any] = await self._json("GET", f"/repos/{_repo(repo)}/pulls/{number}")
        return result

    async def list_pulls(self, repo: str, state: str = "open") -> list[dict[str, Any]]:
        if state not in ("open", "closed", "all"):
            raise ValueError(f"state must be 'open', 'closed' or 'all', got {state!r}")
        return await self._paged(f"/repos/{_repo(repo)}/pulls", {"state": state}, max_pages=10)

    async def list_pull_files(self, repo: str, number: int) -> list[dict[str, Any]]:
        # GitHub lists at most 3000 files: 30 pages of 100.
        return await self._paged(f"/repos/{_repo(repo)}/pulls/{number}/files")

    async def get_file(self, repo: str, path: str, ref: str | None = None) -> str:
        response = await self.request(
            "GET",
            f"/repos/{_repo(repo)}/contents/{quote(path.lstrip('/'))}",
            params={"ref": ref} if ref else None,
            headers={"Accept": "application/vnd.github.raw+json"},
        )
        if "json" in response.headers.get("content-type", ""):
            body = response.json()
            if isinstance(body, Mapping) and body.get("encoding") == "base64":
                return base64.b64decode(str(body.get("content", ""))).decode("utf-8", "replace")
            if isinstance(body, Mapping) and isinstance(body.get("content"), str):
                return str(body["content"])
            raise GitHubApiError(response.status_code, "GET", "contents", f"{path!r} is not a file")
        return response.text

    async def compare(self, repo: str, base: str, head: str) -> dict[str, Any]:
        basehead = f"{quote(base, safe='')}...{quote(head, safe='')}"
        result: dict[str, Any] = await self._json("GET", f"/repos/{_repo(repo)}/compare/{basehead}")
        return result

    async def list_reviews(self, repo: str, number: int) -> list[dict[str, Any]]:
        return await self._paged(f"/repos/{_repo(repo)}/pulls/{number}/reviews")

    async def create_review(
        self,
        repo: str,
        number: int,
        body: str,
        event: str = "COMMENT",
        commit_id: str | None = None,
        comments: list[dict[str, Any]] | None = None,
        *,
        safe_to_retry: bool = False,
    ) -> dict[str, Any]:
        if event not in REVIEW_EVENTS:
            raise ValueError(f"review event must be one of {sorted(REVIEW_EVENTS)}, got {event!r}")
        payload: dict[str, Any] = {"body": body, "event": event}
        if commit_id:
            payload["commit_id"] = commit_id
        if comments:
            payload["comments"] = comments
        result: dict[str, Any] = await self._json(
            "POST",
            f"/repos/{_repo(repo)}/pulls/{number}/reviews",
            json=payload,
            safe_to_retry=safe_to_retry,
        )
        return result

    async def create_issue_comment(
        self, repo: str, number: int, body: str, *, safe_to_retry: bool = False
    ) -> dict[str, Any]:
        result: dict[str, Any] = await self._json(
            "POST",
            f"/repos/{_repo(repo)}/issues/{number}/comments",
            json={"body": body},
            safe_to_retry=safe_to_retry,
        )
        return result

    async def add_labels(self, repo: str, number: int, labels: list[str]) -> list[dict[str, Any]]:
        # Adding a label twice leaves the same labels: safe to repeat.
        result: list[dict[str, Any]] = await self._json(
            "POST",
            f"/repos/{_repo(repo)}/issues/{number}/labels",
            json={"labels": labels},
            safe_to_retry=True,
        )
        return result

    async def list_issues(
        self, repo: str, state: str = "open", labels: list[str] | None = None
    ) -> list[dict[str, Any]]:
        if state not in ("open", "closed", "all"):
            raise ValueError(f"state must be 'open', 'closed' or 'all', got {state!r}")
        params: dict[str, Any] = {"state": state}
        if labels:
            params["labels"] = ",".join(labels)
        return await self._paged(f"/repos/{_repo(repo)}/issues", params, max_pages=10)

    async def get_issue(self, repo: str, number: int) -> dict[str, Any]:
        result: dict[str, Any] = await self._json("GET", f"/repos/{_repo(repo)}/issues/{number}")
        return result

    async def graphql(
        self, query: str, variables: Mapping[str, Any] | None = None, *, safe_to_retry: bool = False
    ) -> dict[str, Any]:
        """Run an allow-listed GraphQL operation; anything else is refused before sending."""
        operation = check_graphql(query)
        spec = classify_graphql(
            is_mutation=operation.kind == "mutation",
            creates_content=operation.creates_content,
            limits=self.throttle.limits,
        )
        response = await self.request(
            "POST",
            "/graphql",
            json={"query": query, "variables": dict(variables or {})},
            safe_to_retry=safe_to_retry,
            spec=spec,
        )
        body = response.json()
        errors = body.get("errors") if isinstance(body, Mapping) else None
        if errors:
            text = "; ".join(str(e.get("message", e)) for e in errors if isinstance(e, Mapping))
            raise GitHubApiError(response.status_code, "POST", "/graphql", text or "GraphQL error")
        data: dict[str, Any] = body.get("data") or {}
        return data

    async def viewer_login(self) -> str:
        data = await self.graphql("query { viewer { login } }")
        return str(data["viewer"]["login"])

    async def rate_limit(self) -> dict[str, Any]:
        """``GET /rate_limit`` (free of charge); its figures also refresh the buckets."""
        body: dict[str, Any] = await self._json("GET", "/rate_limit")
        await self.throttle.absorb_rate_limit_body(body)
        return body

    async def snapshot(self) -> IdentitySnapshot:
        return await self.throttle.snapshot()


__all__ = ["GitHubGateway", "IdentityPaused", "TokenProvider"]
