"""The demo and the evaluations run on a sandbox of their own: the shell's swarm settings (another
store, another GitHub, identities) are dropped before they start, all but the throttle's limits,
which change how fast the run goes and never what it finds."""

from __future__ import annotations

import os

import pytest

from flows.cli.demo import drop_shell_settings


def test_the_shells_settings_are_dropped_and_the_throttles_limits_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SWARM_STORE_URL", "postgresql+psycopg://elsewhere/prod")
    monkeypatch.setenv("SWARM_GITHUB_API_URL", "https://api.github.com")
    monkeypatch.setenv("swarm_repos", "acme/prod")
    monkeypatch.setenv("SWARM_GITHUB_LIMITS__MIN_WRITE_INTERVAL", "0.05")
    monkeypatch.setenv("PATH_UNRELATED", "kept")

    drop_shell_settings()

    assert [k for k in os.environ if k.upper().startswith("SWARM_")] == [
        "SWARM_GITHUB_LIMITS__MIN_WRITE_INTERVAL"
    ]
    assert os.environ["PATH_UNRELATED"] == "kept"
