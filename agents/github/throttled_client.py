"""The one request path from workers to GitHub: throttle, transport, retries, audit record.

Every call is classified (resource, cost, write, content creation), waits for the identity's
throttle, goes out over the identity's transport as the identity's own credential, and its
answer's rate-limit headers go back into the buckets. githubkit's own throttler and auto-retry are
off (see :mod:`agents.transport.client`): the throttle and the retry policy here decide.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import httpx
from tenacity import (
    AsyncRetrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential_jitter,
)

from agents.github.errors import GitHubApiError, TokenRefused
from agents.github.outbound import Outbound, sanitise_json
from agents.github.records import CallObserver, GitHubCallRecord
from agents.github.responses import error_message, graphql_cost
from agents.github.turn import Turn
from agents.ratelimit import Permit
from agents.ratelimit.github.requests import RequestSpec, classify_rest
from agents.ratelimit.github.throttle import IdentityThrottle
from agents.redact import redact_obj
from agents.transport import CredentialRefused, GitHubUnreachable
from agents.transport.auth import CredentialAuth
from agents.transport.client import CallOptions, GitHubTransport

if TYPE_CHECKING:
    from agents.github.writes import WriteLedger

log = logging.getLogger(__name__)


def _put_back(payload: object, verbatim: Mapping[str, str]) -> object:
    """``payload`` with every string equal to a placeholder of ``verbatim`` replaced by its
    value (at any depth)."""
    if isinstance(payload, dict):
        return {key: _put_back(value, verbatim) for key, value in payload.items()}
    if isinstance(payload, list):
        return [_put_back(item, verbatim) for item in payload]
    if isinstance(payload, str):
        return verbatim.get(payload, payload)
    return payload


@dataclass(frozen=True)
class Kept:
    """What the cleaning of a request's body leaves as the calling code wrote it: the logins it
    means to ping (``mentions``), and values put in after redaction and sanitising
    (``verbatim``: placeholder to value, see :meth:`ThrottledClient.request`)."""

    mentions: Collection[str] = ()
    verbatim: Mapping[str, str] | None = None


NOTHING_KEPT: Final = Kept()


class _Transient(Exception):
    """A 5xx (``status``) or no answer at all (``unreachable``) worth another try."""

    def __init__(
        self, description: str, status: int | None, unreachable: GitHubUnreachable | None = None
    ) -> None:
        super().__init__(description)
        self.status = status
        self.unreachable = unreachable


class ThrottledClient:
    """One identity's calls as one worker (``worker_id``), through the identity's throttle."""

    def __init__(
        self,
        transport: GitHubTransport,
        auth: CredentialAuth,
        throttle: IdentityThrottle,
        *,
        on_call: CallObserver | None = None,
        worker_id: str = "default",
        writes: WriteLedger | None = None,
        write_target: str | None = None,
    ) -> None:
        self.identity = throttle.identity
        self.throttle = throttle
        self.worker_id = worker_id
        self.on_call = on_call
        # The run's write caps, and the PR a write by comment or thread id is about (the
        # worker's task): a write over a cap is refused here, before anything is sent.
        self.writes = writes
        self.write_target = write_target
        self._transport = transport
        self._auth = auth

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        json: object = None,
        headers: Mapping[str, str] | None = None,
        safe_to_retry: bool | None = None,
        spec: RequestSpec | None = None,
        kept: Kept = NOTHING_KEPT,
    ) -> httpx.Response:
        """Send one REST call through the throttle; raises on an error status.

        Every JSON body passes :func:`agents.redact.redact_obj` first, and every ``body`` in a
        write's JSON then :func:`agents.github.outbound.sanitise_json` (``kept.mentions``: the
        logins the calling code itself means to ping, the only mentions kept). Reads retry on
        5xx/timeouts; writes only when ``safe_to_retry`` (repeating it does no harm). A
        rate-limit answer is retried after its pause, never sooner; a pause longer than
        ``max_inline_wait`` raises :class:`IdentityPaused`.

        ``kept.verbatim`` maps placeholders in ``json`` to values put in after redaction and
        sanitising: a file's base64 contents (redaction takes any long base64 run for a secret
        and would send ``[REDACTED:base64]`` instead). The caller redacts what it encodes.
        """
        if json is not None:
            # The one way out to GitHub: a body the model wrote (a review quoting a token from
            # the diff) is published only after the redaction table has seen it.
            json = redact_obj(json)
            if method.upper() != "GET":
                # The same for what the model wrote: it read the PR, so it pings, shows, links
                # and embeds nothing the product did not put there itself. After redaction, so
                # the marks it inserts never split a secret the table must still recognise.
                rules = Outbound.of(kept.mentions, self._transport.urls.web)
                json = sanitise_json(json, rules)
            if kept.verbatim:
                json = _put_back(json, kept.verbatim)
        if spec is None:
            if path.rstrip("/").endswith("/graphql") or path.strip("/") == "graphql":
                raise ValueError("GraphQL goes through GitHubGateway.graphql(), not request()")
            spec = classify_rest(method, path, self.throttle.limits)
        if spec.is_write and self.writes is not None:
            self.writes.admit(spec, json, self.write_target)
        lim = self.throttle.limits
        retry_transient = safe_to_retry if spec.is_write else (safe_to_retry is not False)
        attempts = 1 + (lim.max_transient_retries if retry_transient else 0)
        retrying = AsyncRetrying(
            stop=stop_after_attempt(attempts),
            wait=wait_exponential_jitter(
                multiplier=lim.transient_backoff_initial, max=lim.transient_backoff_max
            ),
            retry=retry_if_exception_type(_Transient),
            sleep=self.throttle.clock.sleep,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    number = attempt.retry_state.attempt_number
                    options = CallOptions(params=params, json=json, headers=headers)
                    return await self._through_pauses(spec, number, options)
        except _Transient as exc:
            if exc.status is not None:
                raise GitHubApiError(exc.status, spec.method, spec.route, str(exc)) from None
            lost = exc.unreachable
            assert lost is not None  # a transient without a status is one without an answer
            raise GitHubUnreachable(
                f"GitHub {spec.method} {spec.route}: {exc}", kind=lost.kind, origin=lost.origin
            ) from None
        raise AssertionError("unreachable")  # pragma: no cover

    async def _through_pauses(
        self, spec: RequestSpec, attempt: int, options: CallOptions
    ) -> httpx.Response:
        turn = Turn(self.throttle, self.worker_id, spec)
        while True:
            permit = await turn.permit()
            response, duration_ms = await self._send_once(turn, permit, attempt, options)
            # Recorded before it is judged: a rate-limit answer that ends in a pause was sent too.
            self._record(permit, attempt, response, None, duration_ms)
            if not await turn.answered(permit, response):
                continue  # rate-limited: the next permit waits until the pause is over
            message = error_message(response) if response.is_error else None
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
        self, turn: Turn, permit: Permit[RequestSpec], attempt: int, options: CallOptions
    ) -> tuple[httpx.Response, float]:
        spec = permit.request
        url = self._transport.urls.graphql if spec.resource == "graphql" else spec.target
        started = time.perf_counter()
        try:
            response = await self._transport.asend(spec.method, url, auth=self._auth, **options)
            return response, (time.perf_counter() - started) * 1000
        except GitHubUnreachable as exc:
            await turn.unanswered(permit)
            self._record(permit, attempt, None, exc.kind, (time.perf_counter() - started) * 1000)
            raise _Transient(exc.kind, None, exc) from None
        except CredentialRefused as exc:
            await turn.unanswered(permit)
            raise TokenRefused(str(exc)) from None
        except BaseException:
            await turn.unanswered(permit)
            raise

    def _record(
        self,
        permit: Permit[RequestSpec],
        attempt: int,
        response: httpx.Response | None,
        error: str | None,
        duration_ms: float,
    ) -> None:
        if self.on_call is None:
            return
        spec = permit.request
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
            cost=graphql_cost(response, spec.points) if spec.resource == "graphql" else spec.points,
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
