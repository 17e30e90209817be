"""``LLMClient``: the one place swarm talks to the Anthropic SDK (``AsyncAnthropic`` on httpx2).

The SDK's own retries are off (``max_retries=0``): every call is estimated, checked against the
model's window, reserved on the key's throttle, sent once, and settled with the answer's
rate-limit headers and usage. The throttle decides what happens after a 429 (the key pauses for
every worker), a 529 (the key backs off with jitter) or a connection error. The HTTP client
ignores the host's proxy variables (``trust_env=False``): a prompt goes to a proxy only when one
is configured explicitly. No error message, repr or log line carries the API key, and no request
carries a secret (:mod:`agents.llm.outbound`).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import anthropic
import httpx2
from pydantic import SecretStr

from agents.json_value import JSONObject
from agents.llm.errors import (
    LLMAuthError,
    LLMError,
    LLMOverloaded,
    LLMPaused,
    LLMRequestError,
    LLMUnavailable,
)
from agents.llm.estimate import Calibrations, request_chars
from agents.llm.models import DEFAULT_REGISTRY, ModelRegistry, ModelSpec
from agents.llm.outbound import redact_request
from agents.llm.usage import Usage
from agents.ratelimit import (
    Clock,
    ImpossibleRequest,
    Paused,
    Permit,
    SystemClock,
    backoff,
)
from agents.ratelimit.anthropic.throttle import Cost, KeyAnswer, KeyMetering, KeyThrottle
from agents.ratelimit.per_key import PerKey
from agents.redact import fingerprint, redact

__all__ = [
    "LLMAuthError",
    "LLMClient",
    "LLMError",
    "LLMOverloaded",
    "LLMPaused",
    "LLMRequestError",
    "LLMResult",
    "LLMUnavailable",
]

_TRANSIENT = {408, 409, 500, 502, 503, 504}


@dataclass(frozen=True)
class LLMResult:
    content: list[JSONObject]
    stop_reason: str | None
    usage: Usage
    model: str
    latency_s: float
    request_id: str | None = None
    attempts: int = 1
    estimated_input_tokens: int = 0
    waited_s: float = 0.0  # time the key's throttle held the call back

    @property
    def tool_uses(self) -> list[JSONObject]:
        return [block for block in self.content if block.get("type") == "tool_use"]

    @property
    def text(self) -> str:
        return "".join(str(b.get("text", "")) for b in self.content if b.get("type") == "text")


@dataclass
class _Tries:
    """One call's refusals so far, by kind, and when its first try began."""

    rate_limited: int = 0
    overloaded: int = 0
    transient: int = 0
    started: float = field(default_factory=time.monotonic)

    @property
    def total(self) -> int:
        return 1 + self.rate_limited + self.overloaded + self.transient

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def gave_up(self) -> str:
        """How long the provider was tried, for the error that ends the call."""
        return f"through {self.total - 1} tries over {self.elapsed:.1f} s; try again later"


class LLMClient:
    def __init__(
        self,
        *,
        api_key: SecretStr | str | None = None,
        base_url: str | None = None,
        http_client: httpx2.AsyncClient | None = None,
        proxy: str | None = None,
        registry: ModelRegistry | None = None,
        metering: KeyMetering | None = None,
        timeout_seconds: float = 600.0,
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
        self.key_id = fingerprint(api_key.get_secret_value())
        self.registry = registry or DEFAULT_REGISTRY
        metering = metering or KeyMetering()
        self.limits = metering.limits
        self.clock: Clock = metering.clock or SystemClock()
        self.calibrations = Calibrations()
        self._backend = metering.backend
        self._throttles: PerKey[str, KeyThrottle] = PerKey(
            lambda name: KeyThrottle(
                name, limits=self.limits, clock=self.clock, backend=self._backend
            )
        )
        if http_client is None:
            # trust_env=False: HTTPS_PROXY and friends on the host never see a prompt.
            http_client = anthropic.DefaultAsyncHttpxClient(
                trust_env=False, proxy=proxy or None, timeout=timeout_seconds
            )
        self._sdk = anthropic.AsyncAnthropic(
            api_key=api_key.get_secret_value(),
            base_url=base_url or os.environ.get("ANTHROPIC_BASE_URL") or None,
            http_client=http_client,
            max_retries=0,
            timeout=timeout_seconds,
        )

    def __repr__(self) -> str:
        return f"LLMClient(base_url={str(self._sdk.base_url)!r}, key={self.key_id})"

    async def aclose(self) -> None:
        await self._sdk.close()

    def spec(self, model: str) -> ModelSpec:
        return self.registry.spec(model)

    def throttle(self, model: str) -> KeyThrottle:
        """The key's throttle for ``model`` (limits are per key and model class)."""
        return self._throttles[f"{self.key_id}:{self.registry.resolve(model)}"]

    def throttles(self) -> list[KeyThrottle]:
        return list(self._throttles.made().values())

    async def create(self, request: Mapping[str, object], *, worker_id: str = "-") -> LLMResult:
        """Send one ``messages.create`` request (from ``build_request``) and type the answer.

        The request is redacted here, the one way out to the model, whoever built it.
        """
        sent = redact_request(request)
        model = str(sent.get("model", ""))
        spec = self.spec(model)
        max_tokens = int(sent.get("max_tokens") or 0)
        chars = request_chars(sent)
        calibration = self.calibrations[self.registry.resolve(model)]
        estimate = calibration.tokens(chars)
        if estimate + max_tokens > spec.context_window:
            raise LLMRequestError(
                f"the request is estimated at {estimate} input tokens plus {max_tokens} output, "
                f"over the {spec.context_window}-token window of {model}; nothing was sent"
            )
        throttle = self.throttle(model)
        cost = {"requests": 1, "input-tokens": estimate, "output-tokens": max_tokens}
        tries = _Tries()
        while True:
            permit = await self._acquire(throttle, worker_id, cost)
            try:
                raw = await self._sdk.messages.with_raw_response.create(**sent)
            except anthropic.APIStatusError as exc:
                await self._refused(throttle, permit, exc, tries)
                continue
            except anthropic.APIConnectionError:
                await throttle.abandon(permit)
                await self._transient(throttle, None, tries)
                continue
            except BaseException:
                await asyncio.shield(throttle.abandon(permit))
                raise
            message = await raw.parse()
            usage = Usage.from_api(message.usage)
            charged = usage.input_tokens + usage.cache_creation_input_tokens
            if spec.cache_reads_count_for_rate_limit:
                charged += usage.cache_read_input_tokens
            answer = KeyAnswer(raw.status_code, raw.headers, charged, usage.output_tokens)
            await throttle.settle(permit, answer)
            calibration.observe(chars, usage.total_input_tokens)
            data = message.model_dump(mode="json", exclude_none=True)
            return LLMResult(
                content=list(data.get("content", [])),
                stop_reason=data.get("stop_reason"),
                usage=usage,
                model=str(data.get("model", model)),
                latency_s=tries.elapsed,
                request_id=raw.request_id,
                attempts=tries.total,
                estimated_input_tokens=estimate,
                waited_s=permit.waited,
            )

    @staticmethod
    async def _acquire(throttle: KeyThrottle, worker_id: str, cost: Cost) -> Permit[Cost]:
        """The key's leave to call, its refusals said as the LLM layer's errors."""
        try:
            return await throttle.acquire(worker_id, cost)
        except Paused as exc:
            raise LLMPaused(exc.until, exc.reason, now=exc.now) from None
        except ImpossibleRequest as exc:
            raise LLMRequestError(str(exc)) from None

    async def _refused(
        self,
        throttle: KeyThrottle,
        permit: Permit[Cost],
        exc: anthropic.APIStatusError,
        tries: _Tries,
    ) -> None:
        """Settle a refused call and decide: retry (return) or give up (raise)."""
        status = exc.status_code
        pause = await throttle.settle(permit, KeyAnswer(status, exc.response.headers))
        if status in (401, 403):
            raise LLMAuthError(
                f"the Anthropic API rejected the API key (HTTP {status}); check ANTHROPIC_API_KEY"
            ) from None
        lim = self.limits
        if status == 429 and pause is not None:
            tries.rate_limited += 1
            if tries.rate_limited > lim.max_rate_limit_retries:
                raise LLMPaused(
                    pause.until,
                    f"{pause.reason}, {tries.rate_limited} times in a row for one call; run "
                    "fewer workers at once or raise the key's limits",
                    now=self.clock.now(),
                ) from None
            return
        if status == 529 and pause is not None:
            tries.overloaded += 1
            if tries.overloaded > lim.max_overload_retries:
                raise LLMOverloaded(
                    pause.until,
                    f"the model provider is overloaded (HTTP 529) and stayed so {tries.gave_up()}",
                    now=self.clock.now(),
                ) from None
            return
        if status in _TRANSIENT:
            await self._transient(throttle, status, tries)
            return
        raise LLMRequestError(
            f"the Anthropic API refused the request (HTTP {status}): "
            f"{self._scrub(_provider_message(exc))}"
        ) from None

    async def _transient(self, throttle: KeyThrottle, status: int | None, tries: _Tries) -> None:
        tries.transient += 1
        lim = self.limits
        if tries.transient > lim.max_transient_retries:
            what = f"HTTP {status}" if status is not None else "connection error"
            raise LLMUnavailable(
                f"the model provider is failing ({what}) {tries.gave_up()}"
            ) from None
        initial, cap = lim.overload_backoff_initial, lim.overload_backoff_max
        await throttle.clock.sleep(backoff(tries.transient, initial, cap))

    def _scrub(self, text: str) -> str:
        """Provider text made safe to show: our key removed, then the shared redaction rules."""
        key = self._key.get_secret_value()
        return redact(text.replace(key, "[redacted]") if key else text)[:300]


def _provider_message(exc: anthropic.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, Mapping):
        error = body.get("error")
        if isinstance(error, Mapping) and isinstance(error.get("message"), str):
            return str(error["message"])
    return exc.message
