"""Usage and cost arithmetic from the provider's usage fields."""

from __future__ import annotations

import logging

import pytest

from agents.llm.models import BUILTIN
from agents.llm.usage import (
    Usage,
    cache_hit_ratio,
    cost,
    input_cost,
    is_cache_miss,
)


def test_cost_prices_each_counter_at_its_rate() -> None:
    usage = Usage(
        input_tokens=1_000_000,
        cache_creation_input_tokens=1_000_000,
        cache_read_input_tokens=1_000_000,
        output_tokens=1_000_000,
    )
    # Sonnet: 3 input + 3.75 cache write + 0.30 cache read + 15 output.
    assert cost(usage, "claude-sonnet-4-6") == pytest.approx(22.05)
    # Opus 4.5+: 5 + 6.25 + 0.50 + 25.
    assert cost(usage, "claude-opus-4-5") == pytest.approx(36.75)
    assert input_cost(usage, "claude-haiku-4-5") == pytest.approx(1 + 1.25 + 0.1)


def test_cache_prices_default_to_the_providers_multipliers() -> None:
    for spec in BUILTIN.values():
        assert spec.write_5m == pytest.approx(spec.input_per_mtok * 1.25)
        assert spec.write_1h == pytest.approx(spec.input_per_mtok * 2.0)
        assert spec.read == pytest.approx(spec.input_per_mtok * 0.1)


def test_one_hour_cache_writes_are_billed_at_twice_the_input_price() -> None:
    usage = Usage.from_api(
        {
            "input_tokens": 0,
            "cache_creation_input_tokens": 3_000_000,
            "cache_creation": {
                "ephemeral_5m_input_tokens": 2_000_000,
                "ephemeral_1h_input_tokens": 1_000_000,
            },
        }
    )
    assert usage.cache_creation_1h_input_tokens == 1_000_000
    # Sonnet: 2 M at 3.75 plus 1 M at 6.
    assert input_cost(usage, "claude-sonnet-4-6") == pytest.approx(13.5)


def test_usage_reads_sdk_style_and_dict_usage_and_adds_up() -> None:
    class Sdk:
        input_tokens = 10
        cache_creation_input_tokens = None
        cache_read_input_tokens = 90
        output_tokens = 5

    first = Usage.from_api(Sdk())
    second = Usage.from_api({"input_tokens": 1, "output_tokens": 2})
    assert first == Usage(10, 0, 90, 5)
    assert (first + second).as_dict() == {
        "input_tokens": 11,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 90,
        "output_tokens": 7,
        "cache_creation_1h_input_tokens": 0,
    }
    assert first.total_input_tokens == 100 and first.total_tokens == 105


def test_cache_hit_ratio_is_the_read_share_of_input() -> None:
    assert cache_hit_ratio(Usage(10, 0, 90, 5)) == pytest.approx(0.9)
    assert cache_hit_ratio(Usage()) == 0.0


def test_cache_miss_is_logged_only_for_a_prefix_that_should_have_been_cached(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="agents.llm.usage")
    assert is_cache_miss(Usage(input_tokens=3000), prefix_len_tokens=2500)
    assert "prompt cache miss: a 2500-token prefix neither wrote nor read the cache" in caplog.text
    caplog.clear()
    assert not is_cache_miss(Usage(input_tokens=500), prefix_len_tokens=500)  # below minimum
    assert not is_cache_miss(Usage(10, 0, 2500, 1), prefix_len_tokens=2500)
    assert not is_cache_miss(Usage(10, 2500, 0, 1), prefix_len_tokens=2500)
    assert caplog.text == ""
