"""CLI tests: the real ``swarm`` app in-process, each test in its own empty directory.

``swarm(...)`` runs one command and returns what a person would see; ``assert_error`` checks the
promise every error keeps: the exact first line, the exit status, no traceback, no secret.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli.app import app
from tests.paths import ROOT

EXIT_FAILED = 1
EXIT_USAGE = 2


@dataclass(frozen=True)
class Seen:
    """What one command printed (stdout and stderr, as a terminal shows them) and its status."""

    code: int
    output: str
    exception: BaseException | None

    @property
    def lines(self) -> list[str]:
        return self.output.strip().splitlines()

    @property
    def first_line(self) -> str:
        return self.lines[0] if self.lines else ""


def swarm(*args: str) -> Seen:
    result = CliRunner().invoke(app, list(args), terminal_width=200)
    raised = result.exception if not isinstance(result.exception, SystemExit) else None
    return Seen(result.exit_code, result.output, raised)


def assert_error(seen: Seen, first_line: str, code: int, secrets: Iterable[str] = ()) -> None:
    assert seen.first_line == first_line, seen.output
    assert seen.code == code, seen.output
    assert seen.exception is None, repr(seen.exception)
    assert "Traceback" not in seen.output
    assert len(seen.lines) <= 2, seen.output
    for secret in secrets:
        assert secret not in seen.output


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No SWARM_* settings, an empty working directory (no secrets/ folder), its own data dir."""
    for key in list(os.environ):
        if key.startswith("SWARM_"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SWARM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SWARM_ROLES_DIR", str(ROOT / "roles"))
    # The width `swarm()` renders at, whatever the runner set: xdist workers inherit the
    # controller's COLUMNS, and a table narrower than its test reads leaves columns out.
    monkeypatch.setenv("COLUMNS", "200")
    return tmp_path


@pytest.fixture
def app_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A complete configuration of the smallest kind (the key file is there, but its text is
    never read by these tests)."""
    (tmp_path / "key.pem").write_text("not a key: no test here reaches GitHub\n")
    monkeypatch.setenv("SWARM_GITHUB_API_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("SWARM_APP_ID", "1001")
    monkeypatch.setenv("SWARM_APP_PRIVATE_KEY_FILE", str(tmp_path / "key.pem"))
    monkeypatch.setenv("SWARM_APP_INSTALLATION_ID", "2001")
    monkeypatch.setenv("SWARM_MAINTAINER_LOGIN", "octo-maintainer")
