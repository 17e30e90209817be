"""What ``swarm app create`` asks GitHub for: one App per identity the roles name, each with its
roles' permissions (never above the worker ceiling), and the events the swarm acts on on the one
App that takes the webhook; and every mistake in the request named before anything starts."""

from __future__ import annotations

from pathlib import Path

from agents.events.routing import EVENTS_ACTED_ON
from agents.identity.registration import RegisteredApp
from agents.permissions import WORKER_CEILING, WRITER_CEILING, within
from agents.roles.files import load_roles
from flows.cli.app_actions import AppFiles, AppRequest
from flows.cli.app_manifest import plan_apps
from tests.cli.conftest import EXIT_USAGE, assert_error, swarm
from tests.paths import ROOT

HOOK = "https://swarm.example.com/github/webhook"


def test_one_app_per_identity_with_its_roles_permissions_and_the_webhook_on_the_default() -> None:
    plans = plan_apps(load_roles(ROOT / "roles"), prefix="acme", webhook_url=HOOK)
    assert [(p.identity, p.name) for p in plans] == [
        ("default", "acme-reviewer"),
        ("triage", "acme-triage"),
        ("writer", "acme-writer"),
    ]
    reviewer, triage, writer = plans
    assert reviewer.roles == ("responder", "reviewer", "security-reviewer", "summarizer")
    # GitHub sends issue_comment and issues only to an App that may read issues.
    assert reviewer.permissions == {
        "contents": "read",
        "issues": "read",
        "metadata": "read",
        "pull_requests": "write",
    }
    assert set(reviewer.events) == set(EVENTS_ACTED_ON)
    assert triage.permissions == {"issues": "write", "metadata": "read"}
    assert triage.events == () and triage.webhook_url is None
    # The writer's App: its role's permissions, within the writing ceiling and nothing above it
    # (never workflows, administration or secrets); no events, its settings say "writing".
    assert writer.permissions == {
        "contents": "write",
        "issues": "write",  # the plan it posts for approval (docs/writer.md)
        "metadata": "read",
        "pull_requests": "write",
    }
    assert writer.events == () and writer.webhook_url is None and writer.ceiling == "writing"
    assert (reviewer.ceiling, triage.ceiling) == ("reviewing", "reviewing")
    for plan in (reviewer, triage):
        assert within(WORKER_CEILING, plan.permissions), plan
    assert within(WRITER_CEILING, writer.permissions)
    manifest = reviewer.manifest(homepage="h", redirect_url="r", setup_url="s")
    assert manifest["hook_attributes"] == {"url": HOOK, "active": True}
    assert manifest["default_events"] == list(reviewer.events)
    assert manifest["public"] is False


def test_without_a_webhook_no_app_subscribes_to_events_or_asks_more_than_its_roles() -> None:
    plans = plan_apps(load_roles(ROOT / "roles"), prefix="swarm", webhook_url=None)
    assert plans[0].permissions == {
        "contents": "read",
        "metadata": "read",
        "pull_requests": "write",
    }
    manifest = plans[0].manifest(homepage="h", redirect_url="r", setup_url="s")
    assert "default_events" not in manifest and "hook_attributes" not in manifest


def test_only_the_identities_asked_for() -> None:
    plans = plan_apps(load_roles(ROOT / "roles"), prefix="p", webhook_url=HOOK, only=["triage"])
    assert [p.identity for p in plans] == ["triage"]
    assert plans[0].webhook_url == HOOK  # the only App made takes the webhook


def test_every_mistake_in_the_request_is_named_at_once_before_anything_starts(
    tmp_path: Path,
) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "app-private-key.pem").write_text("an earlier App's key")
    seen = swarm(
        "app",
        "create",
        "--org",
        "acme",
        "--identity",
        "triag",
        "--identity",
        "default",
        "--webhook-url",
        "swarm.example.com",
        "--no-browser",
    )
    assert seen.code == EXIT_USAGE, seen.output
    assert seen.lines[0] == "error: 4 problems:"
    text = seen.output
    assert "--identity: no role acts as 'triag'" in text
    assert "--webhook-url: must start with https://" in text
    assert "--maintainer: needed for an organization's Apps" in text
    assert "already there: secrets/app-private-key.pem" in text
    assert (tmp_path / "secrets" / "app-private-key.pem").read_text() == "an earlier App's key"


def test_a_key_already_there_is_kept_unless_forced(tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "github-app.env").write_text("SWARM_APP_ID=1\n")
    assert_error(
        swarm("app", "create", "--no-browser"),
        "error: already there: secrets/github-app.env (move them away, or --force)",
        EXIT_USAGE,
    )


def _request(github_url: str, org: str | None) -> AppRequest:
    return AppRequest(
        github_url=github_url,
        org=org,
        identities=(),
        webhook_url=None,
        maintainer=None,
        name_prefix=None,
        secrets_dir=Path("secrets"),
        force=False,
        open_browser=False,
    )


def test_github_com_and_an_enterprise_server_personal_or_organization() -> None:
    personal = _request("https://github.com", None)
    assert personal.api_url == "https://api.github.com"
    assert personal.new_app_url == "https://github.com/settings/apps/new"
    org = _request("https://ghe.example.com/", "acme")
    assert org.api_url == "https://ghe.example.com/api/v3"
    assert org.new_app_url == "https://ghe.example.com/organizations/acme/settings/apps/new"


def test_a_personal_apps_maker_is_the_maintainer_and_each_key_is_private(tmp_path: Path) -> None:
    from pydantic import SecretStr

    files = AppFiles(tmp_path / "secrets", "https://api.github.com", None)
    app = RegisteredApp(
        id=7,
        slug="swarm-reviewer",
        name="swarm-reviewer",
        html_url="https://github.com/apps/swarm-reviewer",
        owner_login="octocat",
        owner_type="User",
        pem=SecretStr("-----BEGIN RSA PRIVATE KEY-----\nfake\n"),
        webhook_secret=None,
    )
    files.save_app("default", app)
    settings = (tmp_path / "secrets" / "github-app.env").read_text().splitlines()
    assert "SWARM_MAINTAINER_LOGIN=octocat" in settings
    assert "SWARM_APP_ID=7" in settings
    key = tmp_path / "secrets" / "app-private-key.pem"
    assert key.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "secrets").stat().st_mode & 0o777 == 0o700
    assert not (tmp_path / "secrets" / "webhook-secret").exists()
