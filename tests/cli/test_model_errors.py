"""An unknown model id, or a bad model description, stops ``swarm run`` before anything starts:
one line naming the flag or setting and how to fix it, exit status 2."""

from __future__ import annotations

import pytest

from agents.settings.model import load_settings
from flows.run.models import check_model
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


@pytest.mark.parametrize(
    ("setting", "value", "first_line"),
    [
        ("SWARM_MODEL", "claude-sonnet-9", "error: SWARM_MODEL: model 'claude-sonnet-9' is not in"),
        (
            "SWARM_MODELS",
            '{"my-model": {"context_window": 0}}',
            "error: SWARM_MODELS: my-model.context_window: ",
        ),
    ],
    ids=["unknown-model-names-swarm-model", "bad-description-named-field-by-field"],
)
def test_a_wrong_model_setting_stops_the_run_naming_the_setting(
    api_key: None, monkeypatch: pytest.MonkeyPatch, setting: str, value: str, first_line: str
) -> None:
    monkeypatch.setenv(setting, value)
    seen = swarm("run", "--repo", "acme/widgets")
    assert seen.code == EXIT_USAGE, seen.output
    assert seen.first_line.startswith(first_line), seen.output


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
