"""The scripted model enforces what the provider enforces: per-key limits, windows, overload."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import httpx2

from sandbox.model import ScriptedModel
from sandbox.model.ratelimit import ProviderLimits, key_id


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


def _post(model: ScriptedModel, body: dict[str, Any], key: str = "k1") -> httpx2.Response:
    with httpx2.Client(transport=httpx2.MockTransport(model.handle)) as http:
        return http.post(
            "https://api.anthropic.com/v1/messages", json=body, headers={"x-api-key": key}
        )


def _body(chars: int, *, max_tokens: int = 100, model: str = "scripted") -> dict[str, Any]:
    # A text user block costs ceil(len(json)/4) tokens: 26 characters of JSON around the text.
    return {
        "model": model,
        "max_tokens": max_tokens,
        "messages": [{"role": "user", "content": "x" * chars}],
    }


def test_every_answer_carries_the_rate_limit_headers() -> None:
    clock = Clock()
    limits = ProviderLimits(requests_per_minute=50, input_tokens_per_minute=10_000)
    model = ScriptedModel(clock=clock, limits=limits)
    response = _post(model, _body(400))
    assert response.status_code == 200
    headers = response.headers
    assert headers["anthropic-ratelimit-requests-limit"] == "50"
    assert headers["anthropic-ratelimit-requests-remaining"] == "49"
    assert headers["anthropic-ratelimit-input-tokens-limit"] == "10000"
    assert headers["anthropic-ratelimit-input-tokens-remaining"] == str(10_000 - 107)
    reset = datetime.fromisoformat(headers["anthropic-ratelimit-input-tokens-reset"])
    # The bucket refills at limit / 60 s: 107 tokens take 0.642 s.
    assert abs(reset.timestamp() - (clock.now + 107 * 60 / 10_000)) < 0.002
    assert headers["anthropic-ratelimit-output-tokens-remaining"] == str(
        400_000 - response.json()["usage"]["output_tokens"]
    )


def test_input_tokens_over_the_minute_budget_get_429_with_retry_after() -> None:
    clock = Clock()
    model = ScriptedModel(clock=clock, limits=ProviderLimits(input_tokens_per_minute=1000))
    assert _post(model, _body(3000)).status_code == 200  # 757 tokens
    refused = _post(model, _body(3000))
    assert refused.status_code == 429
    assert refused.json()["error"]["type"] == "rate_limit_error"
    assert "input-tokens per minute" in refused.json()["error"]["message"]
    # 243 left, 757 wanted: 514 tokens at 1000/60 per second is 30.84 s, rounded up.
    assert refused.headers["retry-after"] == "31"
    assert refused.headers["anthropic-ratelimit-input-tokens-remaining"] == "243"
    clock.now += 31
    assert _post(model, _body(3000)).status_code == 200
    assert model.limits.records[key_id("k1")].refused == 1
    assert model.status_counts == {200: 2, 429: 1}


def test_each_key_has_its_own_budget() -> None:
    clock = Clock()
    model = ScriptedModel(
        clock=clock,
        limits=ProviderLimits(input_tokens_per_minute=1000),
        key_limits={"k2": ProviderLimits(input_tokens_per_minute=5000)},
    )
    assert _post(model, _body(3000), key="k1").status_code == 200
    assert _post(model, _body(3000), key="k1").status_code == 429
    for _ in range(6):
        assert _post(model, _body(3000), key="k2").status_code == 200
    assert _post(model, _body(3000), key="k2").status_code == 429


def test_output_is_reserved_at_max_tokens_and_settled_to_the_real_output() -> None:
    clock = Clock()
    model = ScriptedModel(clock=clock, limits=ProviderLimits(output_tokens_per_minute=1000))
    assert _post(model, _body(10, max_tokens=1001)).status_code == 429
    first = _post(model, _body(10, max_tokens=1000))
    assert first.status_code == 200
    used = first.json()["usage"]["output_tokens"]
    assert first.headers["anthropic-ratelimit-output-tokens-remaining"] == str(1000 - used)


def test_cache_reads_do_not_count_against_input_tokens_per_minute() -> None:
    clock = Clock()
    model = ScriptedModel(clock=clock, limits=ProviderLimits(input_tokens_per_minute=6000))
    body = _body(20)
    body["system"] = [
        {"type": "text", "text": "s" * 16_000, "cache_control": {"type": "ephemeral"}}
    ]
    first = _post(model, body)
    assert first.json()["usage"]["cache_creation_input_tokens"] > 4000
    for _ in range(5):  # each reads ~4000 tokens from the cache and counts only ~10
        again = _post(model, body)
        assert again.status_code == 200
        assert again.json()["usage"]["cache_read_input_tokens"] > 4000
    counting = ScriptedModel(clock=clock, limits=ProviderLimits(6000), cache_reads_count=True)
    counting.limits.set_limits("k1", ProviderLimits(input_tokens_per_minute=6000))
    assert _post(counting, body).status_code == 200
    assert _post(counting, body).status_code == 429


def test_a_request_over_the_context_window_is_refused_and_not_cached() -> None:
    model = ScriptedModel(context_windows={"small": 1000})
    too_long = _post(model, _body(4000, model="small"))
    assert too_long.status_code == 400
    assert too_long.json()["error"] == {
        "type": "invalid_request_error",
        "message": "prompt is too long: 1007 tokens > 1000 maximum",
    }
    with_output = _post(model, _body(3000, max_tokens=300, model="small"))
    assert with_output.status_code == 400
    assert with_output.json()["error"]["message"].startswith(
        "input length and `max_tokens` exceed context limit: 757 + 300 > 1000"
    )
    assert _post(model, _body(3000, max_tokens=200, model="small")).status_code == 200
    assert len(model.requests) == 1


def test_overload_window_answers_529_until_it_ends() -> None:
    clock = Clock()
    model = ScriptedModel(clock=clock)
    model.overload_for(30)
    storm = [_post(model, _body(10)) for _ in range(3)]
    assert [r.status_code for r in storm] == [529, 529, 529]
    assert storm[0].json()["error"]["type"] == "overloaded_error"
    clock.now += 31
    assert _post(model, _body(10)).status_code == 200
