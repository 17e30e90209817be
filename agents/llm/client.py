"""``LLMClient``: the one place swarm talks to the Anthropic SDK (``AsyncAnthropic`` on httpx2).

The SDK retries 408/409/429/5xx itself (``sdk_max_retries``, honouring ``retry-after``); when
it gives up on an overload we back off and try again a few more times (``outer_retries``), then
raise ``LLMOverloaded`` with a message a person can act on. No error message, repr or log line
carries the API key.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx2
from pydantic import SecretStr

from agents.llm.usage import Usage
from agents.redact import redact

_RETRYABLE = {408, 409, 429, 500, 502, 503, 504, 529}


class LLMError(Exception):
    """The model call failed; the message says why and what to do, and never holds the key."""


class LLMOverloaded(LLMError):
    """The provider stayed overloaded or rate-limited through every retry."""


class LLMAuthError(LLMError):
    pass


class LLMRequestError(LLMError):
    """The provider refused the request itself (4xx other than auth and rate limits)."""


@dataclass(frozen=True)
class LLMResult:
    content: list[dict[str, Any]]
    stop_reason: str | None
    usage: Usage
    model: str
    latency_s: float
    request_id: str | None = None
    attempts: int = 1

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        return [block for block in self.content if block.get("type") == "tool_use"]

    @property
    def text(self) -> str:
        return "".join(str(b.get("text", "")) for b in self.content if b.get("type") == "text")


class LLMClient:
    def __init__(
        self,
        *,
        api_key: SecretStr | str | None = None,
        base_url: str | None = None,
        http_client: httpx2.AsyncClient | None = None,
        sdk_max_retries: int = 2,
        outer_retries: int = 2,
        backoff_seconds: float = 2.0,
        max_backoff_seconds: float = 30.0,
        timeout_seconds: float = 600.0,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if isinstance(api_key, str):
            api_key = SecretStr(api_key)
        if api_key is None and os.environ.get("ANTHROPIC_API_KEY"):
            api_key = SecretStr(os.environ["ANTHROPIC_API_KEY"])
        if api_key is None or not api_key.get_secret_value():
            raise LLMAuthError(
                "no Anthropic API key: set ANTHROPIC_API_KEY, or run with --model scripted"
            )
        self._key = api_key
        self._outer_retries = outer_retries
        self._sdk_retries = sdk_max_retries
        self._backoff = backoff_seconds
        self._max_backoff = max_backoff_seconds
        self._sleep = sleep
        self._sdk = anthropic.AsyncAnthropic(
            api_key=api_key.get_secret_value(),
            base_url=base_url or os.environ.get("ANTHROPIC_BASE_URL") or None,
            http_client=http_client,
            max_retries=sdk_max_retries,
            timeout=timeout_seconds,
        )

    def __repr__(self) -> str:
        return f"LLMClient(base_url={str(self._sdk.base_url)!r})"

    async def aclose(self) -> None:
        await self._sdk.close()

    async def create(self, request: Mapping[str, Any]) -> LLMResult:
        """Send one ``messages.create`` request (from ``build_request``) and type the answer."""
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            try:
                message = await self._sdk.messages.create(**dict(request))
            except anthropic.AuthenticationError as exc:
                raise LLMAuthError(
                    f"the Anthropic API rejected the API key (HTTP {exc.status_code}); "
                    "check ANTHROPIC_API_KEY"
                ) from None
            except anthropic.APIStatusError as exc:
                if exc.status_code not in _RETRYABLE:
                    raise LLMRequestError(
                        f"the Anthropic API refused the request (HTTP {exc.status_code}): "
                        f"{self._scrub(_provider_message(exc))}"
                    ) from None
                if attempt > self._outer_retries:
                    raise self._overloaded(
                        exc.status_code, _error_type(exc), attempt, started
                    ) from None
                await self._sleep(self._delay(attempt, exc.response))
                continue
            except anthropic.APIConnectionError:
                if attempt > self._outer_retries:
                    raise self._overloaded(None, "connection error", attempt, started) from None
                await self._sleep(self._delay(attempt, None))
                continue
            data = message.model_dump(mode="json", exclude_none=True)
            return LLMResult(
                content=list(data.get("content", [])),
                stop_reason=data.get("stop_reason"),
                usage=Usage.from_api(data.get("usage", {})),
                model=str(data.get("model", request.get("model", ""))),
                latency_s=time.monotonic() - started,
                request_id=getattr(message, "_request_id", None),
                attempts=attempt,
            )

    def _delay(self, attempt: int, response: httpx2.Response | None) -> float:
        hinted = _retry_after(response)
        if hinted is not None:
            return min(hinted, self._max_backoff)
        return float(min(self._backoff * 2 ** (attempt - 1), self._max_backoff))

    def _overloaded(
        self, status: int | None, kind: str, attempts: int, started: float
    ) -> LLMOverloaded:
        tries = attempts * (self._sdk_retries + 1)
        what = f"HTTP {status} {kind}" if status is not None else kind
        state = {429: "is rate-limiting us", 529: "is overloaded"}.get(status or 0, "is failing")
        return LLMOverloaded(
            f"the model provider {state} ({what}) and still failing after {tries} "
            f"tries over {time.monotonic() - started:.1f}s; try again later or run fewer "
            "workers at once"
        )

    def _scrub(self, text: str) -> str:
        """Provider text made safe to show: our key removed, then the shared redaction rules."""
        key = self._key.get_secret_value()
        return redact(text.replace(key, "[redacted]") if key else text)[:300]


def _retry_after(response: httpx2.Response | None) -> float | None:
    """Seconds the provider asked us to wait, from ``retry-after-ms`` or ``retry-after``."""
    if response is None:
        return None
    for header, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = response.headers.get(header)
        if raw is None:
            continue
        try:
            return max(0.0, float(raw) * scale)
        except ValueError:
            continue
    return None


def _error_type(exc: anthropic.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, Mapping):
        error = body.get("error")
        if isinstance(error, Mapping) and isinstance(error.get("type"), str):
            return str(error["type"])
    return {429: "rate_limit_error", 529: "overloaded_error"}.get(exc.status_code, "api_error")


def _provider_message(exc: anthropic.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, Mapping):
        error = body.get("error")
        if isinstance(error, Mapping) and isinstance(error.get("message"), str):
            return str(error["message"])
    return exc.message
