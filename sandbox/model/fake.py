"""``ScriptedModel``: a deterministic stand-in for the Anthropic Messages API.

Serve it in-process through ``httpx2.MockTransport`` (``model.transport()``, for
``AsyncAnthropic(http_client=...)``) or over loopback (``sandbox.model.server``). It validates
requests like the provider (turn order, tool_use/tool_result pairing, at most four cache
breakpoints, an API key), answers with real ``tool_use`` blocks, and reports usage computed the
provider's way, cache writes and reads included. Like the provider it enforces each model's
context window and per-key requests / input / output tokens per minute (429 with
``retry-after``, rate-limit headers on every answer; see ``sandbox.model.ratelimit``). Knobs:
latency, injected 429/529/5xx errors, an overload window (529 until a time), forced stop
reasons, eager file reading. It shares nothing with ``agents/`` but the wire format.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx2

from sandbox.model.cache import PromptCache, _canonical, count_tokens
from sandbox.model.ratelimit import KeyLimits, ProviderLimits
from sandbox.model.scripts import Conversation, Reply, ToolCall, next_action
from sandbox.model.validate import BadRequest, check_window, validate

DEFAULT_WINDOW = 200_000
ANONYMOUS = "no-key"

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
STOP_REASONS = ("end_turn", "max_tokens", "pause_turn", "refusal", "stop_sequence")


@dataclass
class _Failure:
    status: int
    retry_after_ms: int | None


class ScriptedModel:
    def __init__(
        self,
        *,
        latency_s: float = 0.0,
        min_cacheable_tokens: int = 1024,
        read_files: bool = False,
        clock: Callable[[], float] = time.time,
        require_api_key: bool = True,
        limits: ProviderLimits | None = None,
        key_limits: Mapping[str, ProviderLimits] | None = None,
        context_windows: Mapping[str, int] | None = None,
        cache_reads_count: bool = False,
    ) -> None:
        self.latency_s = latency_s
        self.read_files = read_files
        self.require_api_key = require_api_key
        self.clock = clock
        self.cache = PromptCache(clock, min_cacheable_tokens)
        # Per-key limits by raw key here; the buckets keep only a digest of it.
        self.limits = KeyLimits(clock, limits, key_limits)
        self.context_windows = dict(context_windows or {})
        self.cache_reads_count = cache_reads_count
        self.overloaded_until = 0.0
        self.status_counts: dict[int, int] = {}
        self.answer_log: list[tuple[float, int]] = []  # (clock time, HTTP status) per answer
        self.requests: list[dict[str, Any]] = []  # every well-formed request body, in order
        self.responses: list[dict[str, Any]] = []
        self._failures: deque[_Failure] = deque()
        self._stops: deque[str] = deque()
        self._lock = threading.Lock()
        self._seq = 0

    # -- knobs -----------------------------------------------------------------------------

    def fail_next(self, times: int = 1, status: int = 529, retry_after_ms: int | None = 1) -> None:
        """Answer the next ``times`` requests with HTTP ``status`` (429, 529, 500, ...)."""
        self._failures.extend(_Failure(status, retry_after_ms) for _ in range(times))

    def overload_for(self, seconds: float) -> None:
        """Answer every request with 529 overloaded for ``seconds`` of the model's clock."""
        self.overloaded_until = self.clock() + seconds

    def force_stop(self, *reasons: str) -> None:
        """Make the next calls stop with these reasons, one per call (max_tokens, refusal...)."""
        for reason in reasons:
            if reason not in STOP_REASONS:
                raise ValueError(f"unknown stop reason {reason!r}; use one of {STOP_REASONS}")
        self._stops.extend(reasons)

    # -- transport -------------------------------------------------------------------------

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self.async_handle)

    def async_client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=self.transport())

    async def async_handle(self, request: httpx2.Request) -> httpx2.Response:
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        return self.respond(request.method, request.url.path, request.headers, request.content)

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        if self.latency_s:
            time.sleep(self.latency_s)
        return self.respond(request.method, request.url.path, request.headers, request.content)

    def respond(
        self, method: str, path: str, headers: Mapping[str, str], raw: bytes
    ) -> httpx2.Response:
        """Answer one HTTP request (shared by the in-process transport and the loopback server)."""
        with self._lock:
            response = self._respond(method, path, headers, raw)
            code = response.status_code
            self.status_counts[code] = self.status_counts.get(code, 0) + 1
            self.answer_log.append((self.clock(), code))
            return response

    def _respond(
        self, method: str, path: str, headers: Mapping[str, str], raw: bytes
    ) -> httpx2.Response:
        self._seq += 1
        request_id = f"req_scripted_{self._seq:06d}"
        key = _key(headers)
        if self.require_api_key and key is None:
            return _error(401, "an API key is required (x-api-key or Bearer)", request_id)
        key = key or ANONYMOUS
        if self._failures:
            failure = self._failures.popleft()
            extra = {}
            if failure.retry_after_ms is not None:
                extra["retry-after-ms"] = str(failure.retry_after_ms)
            reason = "Overloaded" if failure.status == 529 else "Please retry"
            return _error(failure.status, reason, request_id, extra)
        if self.clock() < self.overloaded_until:
            return _error(529, "Overloaded", request_id)
        if method != "POST" or path not in ("/v1/messages", "/v1/messages/count_tokens"):
            return _error(404, f"{method} {path} not found", request_id)
        try:
            body = json.loads(raw or b"null")
            if not isinstance(body, dict):
                raise BadRequest("request body must be a JSON object")
            if path.endswith("count_tokens"):
                total = self._count_only(body)
                return httpx2.Response(200, json={"input_tokens": total})
            validate(body)
            planned = self.cache.account(body, commit=False)
            total = sum(vars(planned).values())
            window = self.context_windows.get(str(body["model"]), DEFAULT_WINDOW)
            check_window(total, int(body["max_tokens"]), window)
        except (BadRequest, ValueError) as exc:
            return _error(400, str(exc), request_id)
        counted = planned.input_tokens + planned.cache_creation_input_tokens
        if self.cache_reads_count:
            counted += planned.cache_read_input_tokens
        refusal = self.limits.admit(key, counted, int(body["max_tokens"]))
        if refusal is not None:
            extra = {"retry-after": str(refusal.retry_after_s), **self.limits.headers(key)}
            reason = f"This request would exceed your rate limit of {refusal.resource} per minute"
            return _error(429, reason, request_id, extra)
        self.requests.append(body)
        message = self._answer(body)
        self.responses.append(message)
        self.limits.settle_output(key, int(body["max_tokens"]), message["usage"]["output_tokens"])
        answer_headers = {"request-id": request_id, **self.limits.headers(key)}
        return httpx2.Response(200, json=message, headers=answer_headers)

    def _count_only(self, body: Mapping[str, Any]) -> int:
        probe = PromptCache(lambda: 0.0, 10**12)
        return probe.account(body).input_tokens

    def _answer(self, body: Mapping[str, Any]) -> dict[str, Any]:
        usage = self.cache.account(body)
        stop = self._stops.popleft() if self._stops else None
        content: list[dict[str, Any]]
        if stop == "refusal":
            content, stop_reason = [], "refusal"
        elif stop in ("max_tokens", "pause_turn", "stop_sequence"):
            content, stop_reason = [{"type": "text", "text": "Let me look at the"}], stop
        else:
            action = next_action(Conversation.from_request(body), read_files=self.read_files)
            if isinstance(action, ToolCall):
                text = f"Calling {action.name}." + (f"\n{action.note}" if action.note else "")
                content = [
                    {"type": "text", "text": text},
                    {
                        "type": "tool_use",
                        "id": f"toolu_scripted_{len(self.requests):04d}",
                        "name": action.name,
                        "input": action.input,
                    },
                ]
                stop_reason = "tool_use"
            else:
                assert isinstance(action, Reply)
                content, stop_reason = [{"type": "text", "text": action.text}], "end_turn"
        return {
            "id": f"msg_scripted_{len(self.requests):06d}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": usage.input_tokens,
                "cache_creation_input_tokens": usage.cache_creation_input_tokens,
                "cache_read_input_tokens": usage.cache_read_input_tokens,
                "cache_creation": {
                    "ephemeral_5m_input_tokens": usage.cache_creation_input_tokens,
                    "ephemeral_1h_input_tokens": 0,
                },
                "output_tokens": max(1, count_tokens(_canonical(content))),
            },
        }


def _key(headers: Mapping[str, str]) -> str | None:
    if headers.get("x-api-key"):
        return str(headers["x-api-key"])
    bearer = headers.get("authorization", "")
    return bearer[7:] if bearer.startswith("Bearer ") and len(bearer) > 7 else None


def _error(
    status: int, message: str, request_id: str, headers: Mapping[str, str] | None = None
) -> httpx2.Response:
    kind = _ERROR_TYPES.get(status, "api_error")
    payload = {"type": "error", "error": {"type": kind, "message": message}}
    return httpx2.Response(
        status, json=payload, headers={"request-id": request_id, **(headers or {})}
    )
