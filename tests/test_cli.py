"""The ``swarm`` CLI: help that reads well, config errors as one line and exit 2, role checks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app

runner = CliRunner()

COMMANDS = [
    [],
    ["demo"],
    ["run"],
    ["serve"],
    ["verify"],
    ["exec"],
    ["runs"],
    ["transcript"],
    ["limits"],
    ["audit"],
    ["memory"],
    ["memory", "list"],
    ["memory", "add"],
    ["memory", "edit"],
    ["memory", "rm"],
    ["roles", "check"],
    ["sandbox", "serve"],
    ["store", "prune"],
]

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _clean_swarm_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Each test starts with no SWARM_* settings and an empty data dir."""
    import os

    for key in list(os.environ):
        if key.startswith("SWARM_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("SWARM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SWARM_ROLES_DIR", str(ROOT / "roles"))


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "swarm")
def test_every_command_has_help(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage: swarm" in result.output
    assert "Traceback" not in result.output


def test_top_level_help_lists_the_commands_people_need() -> None:
    result = runner.invoke(app, ["--help"])
    for name in ("demo", "run", "serve", "verify", "exec", "runs", "transcript", "memory"):
        assert name in result.output


def test_help_does_not_import_prefect_or_the_sdks() -> None:
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from flows.cli import app\n"
        "CliRunner().invoke(app, ['--help'])\n"
        "CliRunner().invoke(app, ['run', '--help'])\n"
        "heavy = [m for m in ('prefect', 'anthropic', 'githubkit') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.strip() == ""


def test_a_bad_setting_is_one_clear_line_and_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_GITHUB_API_URL", "ftp://example.com")
    result = runner.invoke(app, ["run", "--repo", "acme/widgets"])
    assert result.exit_code == 2
    assert result.output.strip() == (
        "configuration error: invalid configuration:\n"
        "  SWARM_GITHUB_API_URL: must start with http:// or https://"
    )


def test_run_without_repositories_says_how_to_give_them() -> None:
    result = runner.invoke(app, ["run"])
    assert result.exit_code == 2
    assert result.output.strip() == (
        "configuration error: no repositories to work on: pass --repo OWNER/NAME or set SWARM_REPOS"
    )


def test_an_incomplete_app_identity_names_the_missing_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SWARM_APP_ID", "1001")
    result = runner.invoke(app, ["verify"])
    assert result.exit_code == 2
    assert "SWARM_APP_PRIVATE_KEY_FILE, SWARM_APP_INSTALLATION_ID" in result.output
    assert "Traceback" not in result.output


def test_a_bad_duration_names_the_option() -> None:
    result = runner.invoke(app, ["store", "prune", "--older-than", "soon"])
    assert result.exit_code == 2
    assert result.output.strip() == (
        "configuration error: --older-than: 'soon' is not a duration like 30d, 12h or 45m"
    )


def test_roles_check_lists_each_shipped_role() -> None:
    result = runner.invoke(app, ["roles", "check"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "all valid" in result.output
    for role in ("reviewer", "security-reviewer", "triager", "summarizer"):
        assert role in result.output


def test_roles_check_reports_a_broken_role_with_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "reviewer.yaml").write_text(
        (ROOT / "roles" / "reviewer.yaml")
        .read_text()
        .replace("  contents: read", "  contents: write"),
        encoding="utf-8",
    )
    result = runner.invoke(app, ["roles", "check", "--dir", str(tmp_path)], terminal_width=200)
    assert result.exit_code == 2
    assert result.output.startswith("error: ")
    assert "reviewer.yaml" in result.output
    assert "contents" in result.output
    assert "Traceback" not in result.output


def test_exec_without_a_program_says_what_to_do() -> None:
    result = runner.invoke(app, ["exec", "--role", "reviewer", "--repo", "acme/widgets"])
    assert result.exit_code == 2
    assert "give the program to run after --" in result.output


def test_memory_add_edit_rm_round_trip_keeps_provenance() -> None:
    added = runner.invoke(
        app, ["memory", "add", "This repo wants a test for every bug fix", "--repo", "acme/widgets"]
    )
    assert added.exit_code == 0, added.output
    assert added.output.strip() == "added memory 1"
    edited = runner.invoke(app, ["memory", "edit", "1", "Every bug fix needs a regression test"])
    assert edited.output.strip() == "memory 1 superseded by 2"
    listed = runner.invoke(app, ["memory", "list"], terminal_width=200)
    assert "Every bug fix needs a regression test" in listed.output
    assert "This repo wants" not in listed.output
    history = runner.invoke(app, ["memory", "list", "--all"], terminal_width=200)
    assert "superseded by 2" in history.output
    removed = runner.invoke(app, ["memory", "rm", "2"])
    assert removed.output.strip() == "deleted memory 2"
    assert "no memories yet" in runner.invoke(app, ["memory", "list"]).output


def test_store_prune_reports_what_it_removed_and_keeps_memory() -> None:
    runner.invoke(app, ["memory", "add", "Keep me"])
    result = runner.invoke(app, ["store", "prune", "--older-than", "0s"])
    assert result.exit_code == 0, result.output
    assert "user-visible memory kept" in result.output
    assert "Keep me" in runner.invoke(app, ["memory", "list"], terminal_width=200).output


def test_run_refuses_a_role_that_does_not_review_pull_requests(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    key = tmp_path / "key.pem"
    key.write_text("unused: refused before any key is read")
    monkeypatch.setenv("SWARM_APP_ID", "1001")
    monkeypatch.setenv("SWARM_APP_PRIVATE_KEY_FILE", str(key))
    monkeypatch.setenv("SWARM_APP_INSTALLATION_ID", "2001")
    monkeypatch.setenv("SWARM_MAINTAINER_LOGIN", "octo-maintainer")
    result = runner.invoke(app, ["run", "--repo", "acme/widgets", "--role", "triager"])
    assert result.exit_code == 2
    assert "role 'triager' does not review pull requests" in result.output
