"""``swarm webhook serve`` refuses to start without a usable webhook secret, in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import EXIT_USAGE, assert_error, swarm


def test_serve_without_a_secret_file_names_the_setting(app_settings: None) -> None:
    assert_error(
        swarm("webhook", "serve"),
        "error: missing settings: SWARM_WEBHOOK_SECRET_FILE (the App's webhook secret)",
        EXIT_USAGE,
    )


def test_serve_with_a_short_secret_refuses_without_echoing_it(
    app_settings: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "webhook-secret"
    path.write_text("tiny-secret\n")
    monkeypatch.setenv("SWARM_WEBHOOK_SECRET_FILE", str(path))
    seen = swarm("webhook", "serve")
    assert_error(
        seen,
        f"error: SWARM_WEBHOOK_SECRET_FILE: {path} holds no secret of at least 16 characters",
        EXIT_USAGE,
    )
    assert "tiny-secret" not in seen.output
