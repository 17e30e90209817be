"""The real anthropic SDK (AsyncAnthropic over httpx2) against the scripted model."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agents.llm.client import (
    LLMAuthError,
    LLMClient,
    LLMOverloaded,
    LLMPaused,
    LLMRequestError,
)
from agents.llm.request import build_request
from agents.llm.turn import ToolResult, TurnContext, assistant_message, user_message
from agents.llm.usage import is_cache_miss
from agents.ratelimit.anthropic.limits import LLMLimits
from agents.ratelimit.anthropic.throttle import KeyMetering
from agents.roles import Role, RoleChain
from sandbox.model import ScriptedModel, ScriptedServer
from tests.json_access import obj
from tests.json_access import text as as_text
from tests.llm.clocks import VirtualClock
from tests.llm.harness import T0, FakeRepo, build_prefix

KEY = "sk-ant-api03-SECRETSECRETSECRET-do-not-leak"
CONTRIBUTING = "Please add tests for every change. " * 60
TASK = "Review pull request acme/app#7"


def _client(model: ScriptedModel, **kwargs: Any) -> LLMClient:
    return LLMClient(api_key=KEY, http_client=model.async_client(), **kwargs)


def _first_request(roles: dict[str, Any]) -> dict[str, Any]:
    prefix = build_prefix(roles["reviewer"], context=CONTRIBUTING)
    messages = [user_message(TurnContext(TASK, {"turns": 10}, T0, 1))]
    return build_request(
        prefix, RoleChain(roles["reviewer"]), messages, model="claude-sonnet-4-6", max_tokens=512
    )


def test_tool_use_round_trip_through_the_sdk(roles: dict[str, Role]) -> None:
    model = ScriptedModel()
    request = _first_request(roles)

    async def go() -> tuple[Any, Any]:
        client = _client(model)
        first = await client.create(request)
        tool = first.tool_uses[0]
        result = FakeRepo().execute(as_text(tool["name"]), obj(tool["input"]))
        messages = [
            *request["messages"],
            assistant_message(first.content),
            user_message(
                TurnContext(TASK, {"turns": 9}, T0, 2),
                tool_results=[(as_text(tool["id"]), ToolResult(result))],
            ),
        ]
        for m in messages:  # the history as stored: without the per-request breakpoint
            for b in m["content"]:
                b.pop("cache_control", None)
        prefix = build_prefix(roles["reviewer"], context=CONTRIBUTING)
        second = await client.create(
            build_request(
                prefix,
                RoleChain(roles["reviewer"]),
                messages,
                model="claude-sonnet-4-6",
                max_tokens=512,
            )
        )
        await client.aclose()
        return first, second

    first, second = asyncio.run(go())
    assert first.stop_reason == "tool_use"
    assert first.tool_uses[0]["name"] == "get_pull"
    assert first.tool_uses[0]["input"] == {"repo": "acme/app", "number": 7}
    assert first.request_id == "req_scripted_000001"
    assert second.tool_uses[0]["name"] == "list_pull_files"
    assert second.tool_uses[0]["input"] == {"repo": "acme/app", "number": 7, "page": 1}


def test_repeated_prefix_is_read_from_the_cache(roles: dict[str, Role]) -> None:
    model = ScriptedModel()
    request = _first_request(roles)

    async def go() -> list[Any]:
        client = _client(model)
        return [await client.create(request) for _ in range(2)]

    first, second = asyncio.run(go())
    total = first.usage.total_input_tokens
    assert first.usage.cache_creation_input_tokens == total
    assert first.usage.cache_read_input_tokens == 0
    assert second.usage.cache_read_input_tokens == total
    assert second.usage.cache_creation_input_tokens == 0
    assert not is_cache_miss(second.usage, total)


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


@pytest.fixture
def model(clock: VirtualClock) -> ScriptedModel:
    """The scripted model on the virtual clock: its pauses take no real time."""
    return ScriptedModel(clock=clock)


def _create(model: ScriptedModel, roles: dict[str, Role], **client: Any) -> Any:
    """The reviewer's first request through the real client, to its end."""

    async def go() -> Any:
        return await _client(model, **client).create(_first_request(roles))

    return asyncio.run(go())


def test_overload_then_success_is_retried_after_a_jittered_backoff(
    roles: dict[str, Role], model: ScriptedModel, clock: VirtualClock
) -> None:
    model.fail_next(times=2, status=529, retry_after_ms=None)
    result = _create(model, roles, metering=KeyMetering(clock=clock))
    assert result.stop_reason == "tool_use"
    assert result.attempts == 3
    # 2 s then 4 s, each times a jitter in [0.5, 1): the key backs off, the SDK does not retry.
    first, second = clock.sleeps
    assert 1.0 <= first < 2.0 and 2.0 <= second < 4.0
    assert model.status_counts == {529: 2, 200: 1}


def test_overload_storm_ends_in_a_clear_pause_without_the_key(
    roles: dict[str, Role], model: ScriptedModel, clock: VirtualClock
) -> None:
    model.overload_for(3600)
    with pytest.raises(LLMOverloaded) as err:
        _create(model, roles, metering=KeyMetering(clock=clock))
    message = str(err.value)
    assert message.startswith("model calls paused until ")
    assert (
        ": the model provider is overloaded (HTTP 529) and stayed so through 5 tries over "
        in message
    )
    assert message.endswith("s; try again later")
    assert KEY not in message and KEY not in repr(err.value)
    assert err.value.__cause__ is None and err.value.__suppress_context__
    assert isinstance(err.value, LLMPaused)
    assert model.status_counts == {529: 5}


def test_rate_limited_call_waits_out_retry_after_then_succeeds(
    roles: dict[str, Role], model: ScriptedModel, clock: VirtualClock
) -> None:
    model.fail_next(times=1, status=429, retry_after_ms=7000)
    assert _create(model, roles, metering=KeyMetering(clock=clock)).attempts == 2
    assert clock.sleeps == [7.0]


def test_rate_limit_that_keeps_coming_pauses_the_worker(
    roles: dict[str, Role], model: ScriptedModel, clock: VirtualClock
) -> None:
    model.fail_next(times=50, status=429, retry_after_ms=1000)
    with pytest.raises(LLMPaused, match=r"rate-limited this key \(429\), 2 times in a row"):
        _create(
            model,
            roles,
            metering=KeyMetering(LLMLimits(max_rate_limit_retries=1), clock),
        )
    assert model.status_counts == {429: 2}


def test_a_long_rate_limit_pause_is_reported_not_slept(
    roles: dict[str, Role], model: ScriptedModel, clock: VirtualClock
) -> None:
    model.fail_next(times=1, status=429, retry_after_ms=600_000)
    with pytest.raises(LLMPaused) as err:
        _create(model, roles, metering=KeyMetering(clock=clock))
    assert str(err.value).endswith("(in 600 s): the model provider rate-limited this key (429)")
    assert clock.sleeps == []


def test_bad_request_names_the_provider_reason(roles: dict[str, Role]) -> None:
    model = ScriptedModel()
    request = _first_request(roles)
    request["messages"] = [{"role": "assistant", "content": "hi"}]

    async def go() -> Any:
        return await _client(model).create(request)

    with pytest.raises(LLMRequestError) as err:
        asyncio.run(go())
    assert str(err.value) == (
        "the Anthropic API refused the request (HTTP 400): "
        "messages.0.role: the first message must use the 'user' role"
    )


def test_missing_api_key_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(LLMAuthError, match="no Anthropic API key: set ANTHROPIC_API_KEY"):
        LLMClient()


def test_client_repr_hides_the_key() -> None:
    client = LLMClient(api_key=KEY, base_url="http://127.0.0.1:9")
    assert KEY not in repr(client)


def test_loopback_server_reached_through_anthropic_base_url(
    roles: dict[str, Role], monkeypatch: pytest.MonkeyPatch
) -> None:
    model = ScriptedModel()
    with ScriptedServer(model) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)

        async def go() -> Any:
            client = LLMClient()
            try:
                return await client.create(_first_request(roles))
            finally:
                await client.aclose()

        result = asyncio.run(go())
    assert result.tool_uses[0]["name"] == "get_pull"
    assert len(model.requests) == 1


@pytest.mark.live
def test_live_api_answers_a_tiny_prompt(roles: dict[str, Role]) -> None:
    async def go() -> Any:
        client = LLMClient()
        try:
            return await client.create(
                {
                    "model": "claude-haiku-4-5",
                    "max_tokens": 16,
                    "messages": [{"role": "user", "content": "Say OK."}],
                }
            )
        finally:
            await client.aclose()

    result = asyncio.run(go())
    assert result.usage.output_tokens > 0
