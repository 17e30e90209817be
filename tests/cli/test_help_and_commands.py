"""The ``swarm`` CLI: help that reads well and stays fast, and the everyday commands working."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from flows.cli.app import COMMAND_MODULES
from tests.cli.conftest import swarm
from tests.paths import ROOT

COMMANDS = [
    [],
    ["demo"],
    ["run"],
    ["serve"],
    ["verify"],
    ["exec"],
    ["eval"],
    ["runs"],
    ["transcript"],
    ["limits"],
    ["audit"],
    ["deliveries"],
    ["server"],
    ["server", "start"],
    ["server", "stop"],
    ["server", "status"],
    ["memory"],
    ["memory", "list"],
    ["memory", "add"],
    ["memory", "edit"],
    ["memory", "rm"],
    ["roles", "check"],
    ["config", "check"],
    ["webhook", "serve"],
    ["sandbox", "serve"],
    ["store", "prune"],
    ["store", "copy"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "swarm")
def test_every_command_has_help(command: list[str]) -> None:
    seen = swarm(*command, "--help")
    assert seen.code == 0, seen.output
    assert "Usage: swarm" in seen.output
    assert "Traceback" not in seen.output


def test_top_level_help_lists_the_commands_people_need() -> None:
    seen = swarm("--help")
    for name in ("demo", "run", "serve", "verify", "exec", "runs", "transcript", "memory"):
        assert name in seen.output
    assert "server" in seen.output
    assert "--debug" in seen.output


def test_every_command_module_is_registered() -> None:
    folder = ROOT / "flows" / "cli"
    modules = {
        f"flows.cli.{p.stem}"
        for p in folder.glob("*.py")
        if re.search(r"^commands = ", p.read_text(), flags=re.M)
    }
    assert modules == set(COMMAND_MODULES)


def test_help_does_not_import_prefect_or_the_sdks() -> None:
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from flows.cli.app import app\n"
        "CliRunner().invoke(app, ['--help'])\n"
        "CliRunner().invoke(app, ['run', '--help'])\n"
        "heavy = [m for m in ('prefect', 'anthropic', 'githubkit', 'sqlalchemy',"
        " 'agents.settings.model')"
        " if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.strip() == ""


def test_roles_check_lists_each_shipped_role() -> None:
    seen = swarm("roles", "check")
    assert seen.code == 0, seen.output
    assert "all valid; identities not checked (none configured)" in seen.output
    for role in ("reviewer", "security-reviewer", "triager", "summarizer"):
        assert role in seen.output


def test_roles_check_resolves_identities_when_they_are_configured(
    app_settings: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name, app_id in (("TRIAGE", "1002"), ("WRITER", "1003")):
        monkeypatch.setenv(f"SWARM_IDENTITIES__{name}__APP_ID", app_id)
        monkeypatch.setenv(f"SWARM_IDENTITIES__{name}__INSTALLATION_ID", "2" + app_id[1:])
        monkeypatch.setenv(f"SWARM_IDENTITIES__{name}__PRIVATE_KEY_FILE", str(tmp_path / "k.pem"))
    monkeypatch.setenv("SWARM_IDENTITIES__WRITER__CEILING", "writing")
    seen = swarm("roles", "check")
    assert seen.code == 0, seen.output
    assert "all valid; identities resolved" in seen.output


def test_memory_add_edit_rm_round_trip_keeps_provenance() -> None:
    added = swarm("memory", "add", "This repo wants a test for every bug fix", "--repo", "a/b")
    assert added.code == 0, added.output
    assert added.output.strip() == "added memory 1"
    edited = swarm("memory", "edit", "1", "Every bug fix needs a regression test")
    assert edited.output.strip() == "memory 1 superseded by 2"
    listed = swarm("memory", "list")
    assert "Every bug fix needs a regression test" in listed.output
    assert "This repo wants" not in listed.output
    assert "superseded by 2" in swarm("memory", "list", "--all").output
    assert swarm("memory", "rm", "2").output.strip() == "deleted memory 2"
    assert "no memories yet" in swarm("memory", "list").output


def test_store_prune_reports_what_it_removed_and_keeps_memory() -> None:
    swarm("memory", "add", "Keep me")
    seen = swarm("store", "prune", "--older-than", "0s", "--yes")
    assert seen.code == 0, seen.output
    assert "user-visible memory kept" in seen.output
    assert "Keep me" in swarm("memory", "list").output


def test_store_prune_shows_what_it_would_delete_and_deletes_only_with_yes() -> None:
    from agents.store import Store

    with Store.open(None, Path(os.environ["SWARM_DATA_DIR"])) as store:
        store.record_rate_limit_snapshot(
            identity="swarm[bot]", resource="core", limit=5000, remaining=4999, reset_at=None
        )
    shown = swarm("store", "prune", "--older-than", "0s")
    assert shown.code == 0, shown.output
    assert shown.lines == [
        "would prune 1 record(s) older than 0s: 0 transcript events, 0 LLM calls, 0 GitHub "
        "calls, 1 rate-limit snapshots; nothing deleted: add --yes to delete them"
    ]
    assert "swarm[bot]" in swarm("limits").output
    done = swarm("store", "prune", "--older-than", "90min", "--yes")
    assert done.code == 0 and "pruned 0 record(s) older than 90min" in done.output, done.output
    assert swarm("store", "prune", "--older-than", "0s", "--yes").first_line.startswith(
        "pruned 1 record(s)"
    )
    assert "no rate-limit snapshots" in swarm("limits").output


def test_runs_says_how_to_make_one_when_the_store_is_empty() -> None:
    seen = swarm("runs")
    assert seen.code == 0, seen.output
    assert seen.lines[-1] == "no runs yet; `swarm demo` or `swarm run` makes one"


def test_server_status_without_a_server_says_how_one_starts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setenv("PREFECT_PROFILES_PATH", str(tmp_path / "no-profiles.toml"))
    seen = swarm("server", "status")
    assert seen.code == 1
    assert seen.first_line == (
        f"no local Prefect server running for {tmp_path / 'data' / 'prefect'}; the next "
        "`swarm run` or `swarm server start` starts one"
    )
    assert swarm("server", "stop").first_line == "no local Prefect server was running"


def test_server_status_names_a_configured_prefect_api(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PREFECT_API_URL", "http://prefect.internal:4200/api")
    seen = swarm("server", "status")
    assert seen.code == 0
    assert seen.first_line.startswith(
        "runs use the Prefect API you configured, http://prefect.internal:4200/api"
    )
