"""An unknown model id, or a bad model description, stops ``swarm run`` before anything starts:
one line naming the flag or setting and how to fix it, exit status 2."""

from __future__ import annotations

import pytest

from agents.config import load_settings
from flows.models import check_model
from tests.cli.conftest import EXIT_USAGE, swarm

KNOWN = "known: claude-haiku-4-5, "


@pytest.fixture
def api_key(app_settings: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key-0000")


def test_an_unknown_model_flag_is_named_with_the_known_ids_and_the_setting_to_add_it(
    api_key: None,
) -> None:
    seen = swarm("run", "--repo", "acme/widgets", "--model", "gpt-4o")
    assert seen.code == EXIT_USAGE, seen.output
    assert seen.first_line.startswith(
        "error: --model: model 'gpt-4o' is not in the model registry ("
    ), seen.output
    assert KNOWN in seen.output and "describe it in SWARM_MODELS" in seen.output
    assert "Traceback" not in seen.output and "sk-ant-test" not in seen.output


def test_an_unknown_configured_model_names_swarm_model(
    api_key: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWARM_MODEL", "claude-sonnet-9")
    seen = swarm("run", "--repo", "acme/widgets")
    assert seen.code == EXIT_USAGE, seen.output
    assert seen.first_line.startswith("error: SWARM_MODEL: model 'claude-sonnet-9' is not in")


def test_a_model_described_in_swarm_models_passes_the_model_check(
    api_key: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "SWARM_MODELS",
        '{"my-model": {"context_window": 32000, "max_output_tokens": 4096, '
        '"input_per_mtok": 1, "output_per_mtok": 5}}',
    )
    settings = load_settings()
    check_model(settings, "my-model")  # no error
    assert settings.model_registry().spec("my-model").context_window == 32000


def test_a_bad_model_description_is_named_field_by_field(
    api_key: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWARM_MODELS", '{"my-model": {"context_window": 0}}')
    seen = swarm("run", "--repo", "acme/widgets")
    assert seen.code == EXIT_USAGE, seen.output
    assert seen.first_line.startswith("error: SWARM_MODELS: my-model.context_window: "), seen.output
