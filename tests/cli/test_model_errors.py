"""An unknown model id, or a bad model description, stops ``swarm run`` before anything starts:
one line naming the flag or setting and how to fix it, exit status 2."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agents.settings.model import load_settings
from tests.cli.conftest import EXIT_USAGE, swarm
from tests.paths import ROOT

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
    assert settings.model_problem("my-model") is None
    assert settings.model_registry().spec("my-model").context_window == 32000


def test_an_unknown_swarm_model_fails_swarm_verify(
    app_settings: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWARM_MODEL", "gpt-4o")
    seen = swarm("verify")
    assert seen.code == EXIT_USAGE, seen.output
    assert seen.first_line.startswith("error: SWARM_MODEL: model 'gpt-4o' is not in"), seen.output
    assert len(seen.lines) == 1 and "Traceback" not in seen.output


def test_an_unknown_model_and_a_missing_api_key_are_named_together(
    app_settings: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("SWARM_MODEL", "gpt-4o")
    seen = swarm("run", "--repo", "acme/widgets")
    assert seen.code == EXIT_USAGE, seen.output
    assert seen.lines[0] == "error: 2 settings need fixing:"
    assert seen.lines[1].strip().startswith("missing settings: ANTHROPIC_API_KEY")
    assert seen.lines[2].strip().startswith("SWARM_MODEL: model 'gpt-4o' is not in")
    assert len(seen.lines) == 3


def test_an_unknown_model_in_a_role_file_is_named_by_roles_check_and_by_run(
    api_key: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    roles = tmp_path / "roles"
    shutil.copytree(ROOT / "roles", roles)
    path = roles / "reviewer.yaml"
    path.write_text(path.read_text().replace("model: null", "model: gpt-4o"))
    monkeypatch.setenv("SWARM_ROLES_DIR", str(roles))
    named = f"{roles / 'reviewer'}.yaml: model: model 'gpt-4o' is not in the model registry"
    for seen in (swarm("roles", "check"), swarm("run", "--repo", "acme/widgets")):
        assert seen.code == EXIT_USAGE, seen.output
        assert named in seen.output, seen.output
        assert "Traceback" not in seen.output


def test_swarm_serve_names_an_unknown_model_flag_before_starting_anything(
    api_key: None,
) -> None:
    seen = swarm("serve", "--repo", "acme/widgets", "--model", "gpt-4o")
    assert seen.code == EXIT_USAGE, seen.output
    assert seen.first_line.startswith("error: --model: model 'gpt-4o' is not in"), seen.output
