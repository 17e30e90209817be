"""`--overlay` on the long-running serve commands: a role from roles/, checked before anything
starts (no Prefect server, no listening socket), the same one-line error as `swarm run`'s."""

from __future__ import annotations

from pathlib import Path

import pytest

from flows.run.request import RunRequest
from flows.run.serve import scheduled_deployment
from tests.cli.conftest import EXIT_USAGE, assert_error, swarm

KNOWN = "(known: fixer, implementer, responder, reviewer, security-reviewer, summarizer, triager)"


@pytest.mark.parametrize(
    "command",
    [("webhook", "serve", "--deployment", "swarm-run/unused"), ("serve", "--repo", "acme/widgets")],
    ids=["webhook serve", "serve"],
)
def test_a_serve_command_refuses_an_overlay_naming_no_role(
    app_settings: None,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    command: tuple[str, ...],
) -> None:
    secret = tmp_path / "webhook-secret"
    secret.write_text("a-webhook-secret-of-some-length\n")
    monkeypatch.setenv("SWARM_WEBHOOK_SECRET_FILE", str(secret))
    seen = swarm(*command, "--overlay", "secuirty-reviewer")
    assert seen.first_line.startswith("error: --overlay: no role 'secuirty-reviewer' in ")
    assert seen.first_line.endswith(KNOWN)
    assert_error(seen, seen.first_line, EXIT_USAGE)


def test_serve_help_names_the_overlay_flag_and_the_schedule_carries_it() -> None:
    assert "--overlay" in swarm("webhook", "serve", "--help").output
    assert "--overlay" in swarm("serve", "--help").output
    overlaid = RunRequest(repos=["acme/widgets"], overlay="triager")
    params = scheduled_deployment(overlaid, cron="*/30 * * * *", name="s").parameters
    assert params == {"request": {"overlay": "triager", "repos": ["acme/widgets"]}}
    plain = scheduled_deployment(RunRequest(), cron="*/30 * * * *", name="s").parameters
    assert "overlay" not in plain["request"]


@pytest.mark.parametrize(
    "command",
    [("webhook", "serve", "--deployment", "swarm-run/unused"), ("serve", "--repo", "acme/widgets")],
    ids=["webhook serve", "serve"],
)
def test_a_serve_command_refuses_a_store_it_cannot_open_like_run(
    app_settings: None,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    command: tuple[str, ...],
) -> None:
    secret = tmp_path / "webhook-secret"
    secret.write_text("a-webhook-secret-of-some-length\n")
    monkeypatch.setenv("SWARM_WEBHOOK_SECRET_FILE", str(secret))
    # Nothing listens on port 9: the store cannot be opened.
    monkeypatch.setenv("SWARM_STORE_URL", "postgresql+psycopg://swarm:pw-not-shown@127.0.0.1:9/db")
    served = swarm(*command)
    ran = swarm("run", "--repo", "acme/widgets")
    assert ran.code == EXIT_USAGE and ran.first_line.startswith("error: "), ran.output
    assert_error(served, ran.first_line, EXIT_USAGE, secrets=["pw-not-shown"])
    assert "being served" not in served.output
