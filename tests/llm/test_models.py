"""The model registry: built-in figures, overrides from SWARM_MODELS, unknown ids named."""

from __future__ import annotations

from typing import Any

import pytest

from agents.llm.models import (
    BUILTIN,
    ModelRegistry,
    ModelRegistryError,
    UnknownModel,
)
from agents.llm.usage import Usage, cost


def test_builtin_models_carry_window_output_prices_and_cache_minimum() -> None:
    spec = ModelRegistry().spec("claude-sonnet-4-6")
    assert spec.context_window == 200_000
    assert spec.max_output_tokens == 64_000
    assert (spec.input_per_mtok, spec.output_per_mtok) == (3.0, 15.0)
    assert spec.min_cacheable_tokens == 1024
    assert not spec.cache_reads_count_for_rate_limit


def test_dated_snapshot_ids_resolve_to_their_alias() -> None:
    registry = ModelRegistry()
    assert registry.spec("claude-haiku-4-5-20251001") == BUILTIN["claude-haiku-4-5"]


def test_an_unknown_model_id_names_the_setting_and_the_fix() -> None:
    with pytest.raises(UnknownModel) as err:
        ModelRegistry().spec("gpt-4o")
    message = str(err.value)
    assert message.startswith("SWARM_MODEL: model 'gpt-4o' is not in the model registry (known: ")
    assert "describe it in SWARM_MODELS" in message
    assert "\n" not in message


def test_overrides_change_one_field_of_a_builtin_model() -> None:
    registry = ModelRegistry({"claude-sonnet-4-6": {"context_window": 1_000_000}})
    spec = registry.spec("claude-sonnet-4-6")
    assert spec.context_window == 1_000_000
    assert spec.input_per_mtok == 3.0  # the rest is the built-in entry's


def test_overrides_add_a_model_and_its_prices_drive_cost() -> None:
    registry = ModelRegistry(
        {
            "my-model": {
                "context_window": 32_000,
                "max_output_tokens": 4_000,
                "input_per_mtok": 2.0,
                "output_per_mtok": 10.0,
                "cache_read_per_mtok": 0.5,
            }
        }
    )
    spec = registry.spec("my-model")
    usage = Usage(input_tokens=1_000_000, cache_read_input_tokens=1_000_000, output_tokens=100_000)
    assert cost(usage, spec) == pytest.approx(2.0 + 0.5 + 1.0)


def test_a_bad_override_names_the_setting_the_model_and_the_field() -> None:
    # As SWARM_MODELS arrives: parsed JSON, whose shape nothing has checked yet.
    overrides: dict[str, Any] = {"my-model": {"context_window": 0}, "other": "x"}
    with pytest.raises(ModelRegistryError) as err:
        ModelRegistry(overrides)
    message = str(err.value)
    assert message.startswith("SWARM_MODELS: ")
    assert "my-model.context_window: Input should be greater than 0" in message
    assert "my-model.max_output_tokens: Field required" in message
    assert "other: expected an object of fields" in message
