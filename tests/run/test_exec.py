"""``swarm exec``: the child gets a fresh down-scoped bot token and nothing of the host's."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli.app import app
from sandbox.server import SandboxServer
from tests.conftest import HOST_GH_TOKEN
from tests.run.conftest import Swarm, use_sandbox_settings

CHILD = """
import hashlib, json, os, sys, urllib.request
token = os.environ["GH_TOKEN"]
api = os.environ["GITHUB_API_URL"]
request = urllib.request.Request(
    api + "/installation/repositories", headers={"Authorization": "token " + token}
)
with urllib.request.urlopen(request) as reply:
    repos = [r["full_name"] for r in json.load(reply)["repositories"]]
config = os.environ["GH_CONFIG_DIR"]
print(json.dumps({
    "prefix": token[:4],
    "sha256": hashlib.sha256(token.encode()).hexdigest(),
    "repos": repos,
    "env_values_with_host_token": [k for k, v in os.environ.items() if v == sys.argv[1]],
    "github_token_is_the_bot_token": os.environ.get("GITHUB_TOKEN") == token,
    "gh_config_entries": os.listdir(config),
    "git_config_global": os.environ.get("GIT_CONFIG_GLOBAL"),
    "home": os.environ["HOME"],
    "swarm_settings_seen": sorted(k for k in os.environ if k.startswith("SWARM_")),
}))
sys.exit(int(sys.argv[2]))
"""


@pytest.fixture
def sandboxed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Swarm]:
    with SandboxServer() as server:
        swarm = use_sandbox_settings(monkeypatch, server, tmp_path)
        # What a maintainer's machine has: their token and a gh config that names them.
        host_config = tmp_path / "host-gh"
        host_config.mkdir()
        (host_config / "hosts.yml").write_text("github.com:\n    user: octo-maintainer\n")
        monkeypatch.setenv("GH_CONFIG_DIR", str(host_config))
        monkeypatch.setenv("GH_TOKEN", HOST_GH_TOKEN)
        monkeypatch.setenv("GITHUB_TOKEN", HOST_GH_TOKEN)
        yield swarm


def _exec(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], exit_code: int
) -> tuple[int, dict[str, object]]:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    result = CliRunner().invoke(
        app,
        [
            "exec",
            "--role",
            "reviewer",
            "--repo",
            "acme/widgets",
            "--",
            sys.executable,
            str(script),
            HOST_GH_TOKEN,
            str(exit_code),
        ],
    )
    # The child writes to the real stdout, not to the runner's capture.
    child_out = capfd.readouterr().out
    lines = [line for line in child_out.splitlines() if line.startswith("{")]
    assert lines, result.output + child_out
    return result.exit_code, json.loads(lines[-1])


def test_the_child_sees_only_a_fresh_down_scoped_installation_token(
    sandboxed: Swarm, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    exit_code, seen = _exec(tmp_path, capfd, 0)
    assert exit_code == 0
    assert seen["prefix"] == "ghs_"
    assert seen["repos"] == ["acme/widgets"]
    assert seen["env_values_with_host_token"] == []
    assert seen["github_token_is_the_bot_token"] is True
    assert seen["gh_config_entries"] == []
    assert seen["git_config_global"] is None  # git reads the fresh HOME's .gitconfig
    assert not Path(str(seen["home"])).exists(), "the temporary HOME must be removed"
    assert seen["swarm_settings_seen"] == []

    [token] = [
        t
        for value, t in sandboxed.state.tokens.items()
        if hashlib.sha256(value.encode()).hexdigest() == seen["sha256"]
    ]
    assert token.kind == "installation"
    assert token.permissions == {"contents": "read", "metadata": "read", "pull_requests": "write"}
    assert token.revoked, "the token must be revoked as soon as the child exits"


def test_the_childs_exit_status_is_passed_through_and_the_token_still_revoked(
    sandboxed: Swarm, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    exit_code, seen = _exec(tmp_path, capfd, 7)
    assert exit_code == 7
    [token] = [
        t
        for value, t in sandboxed.state.tokens.items()
        if hashlib.sha256(value.encode()).hexdigest() == seen["sha256"]
    ]
    assert token.revoked


def test_verify_prints_each_identitys_login_and_grants_never_a_token(sandboxed: Swarm) -> None:
    result = CliRunner().invoke(app, ["verify"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "swarm-reviewer[bot]" in result.output
    assert "swarm-triage[bot]" in result.output
    assert "pull_requests:write" in result.output
    assert "ghs_" not in result.output
    minted = [t for t in sandboxed.state.tokens.values() if t.kind == "installation"]
    assert minted, "verify should have test-minted each role's token"
    assert all(t.revoked for t in minted)


def test_verify_names_the_events_the_webhooks_app_is_not_subscribed_to(sandboxed: Swarm) -> None:
    from sandbox.github.seed import REVIEWER_APP_ID

    app_events = sandboxed.state.apps[REVIEWER_APP_ID].events
    result = CliRunner().invoke(app, ["verify"], terminal_width=200)
    assert "webhook events: all 5 subscribed" in " ".join(result.output.split())
    # An App made by hand from the old docs: four events, not the review thread.
    app_events.remove("pull_request_review_thread")
    result = CliRunner().invoke(app, ["verify"], terminal_width=200)
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert (
        "the App is not subscribed to Pull request review thread (pull_request_review_thread)"
        in said
    )
    assert "Issue comment" not in said


def test_verify_says_in_one_line_what_thread_resolution_is_missing(
    sandboxed: Swarm, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sandbox.github.seed import REVIEWER_APP_ID, REVIEWER_INSTALLATION_ID

    def said() -> str:
        result = CliRunner().invoke(app, ["verify"], terminal_width=400)
        assert result.exit_code == 0, result.output
        [line] = [x for x in result.output.splitlines() if "threads of fixed findings" in x]
        assert "swarm-reviewer[bot]" in line
        return line

    assert "NOT resolved: SWARM_RESOLVE_THREADS is off" in said()
    monkeypatch.setenv("SWARM_RESOLVE_THREADS", "true")
    assert "NOT resolved: the App does not ask for Contents: write" in said()
    sandboxed.state.apps[REVIEWER_APP_ID].permissions["contents"] = "write"
    assert "NOT resolved: the installation has not granted Contents: write" in said()
    sandboxed.state.installations[REVIEWER_INSTALLATION_ID].permissions["contents"] = "write"
    line = said()
    assert "NOT" not in line and "resolved with a separate Contents: write token" in line
