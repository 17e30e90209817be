"""docs/configuration.md lists every setting, as the settings model has them."""

from __future__ import annotations

from agents.settings.docs import DOC, render, undocumented


def test_every_setting_has_a_meaning_in_the_docs() -> None:
    assert undocumented() == []


def test_the_configuration_page_matches_the_settings_model() -> None:
    current = DOC.read_text(encoding="utf-8")
    assert render(current) == current, (
        "docs/configuration.md is out of date: run `uv run python -m agents.settings.docs --write`"
    )
    assert "`SWARM_RETENTION_DAYS`" in current
