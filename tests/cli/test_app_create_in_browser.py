"""``swarm app create`` end to end against the sandbox, clicked through in a real browser as a
person does it on GitHub: the swarm's page, GitHub's "create App" page, the install page, for
each of the two identities the shipped roles name; then the files it wrote and ``swarm verify``.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.github.seed import MAINTAINER, ORG
from sandbox.server import SandboxServer
from tests.browser import Browser, Page
from tests.paths import ROOT

pytestmark = pytest.mark.slow
SWARM = str(Path(sys.executable).with_name("swarm"))
WEBHOOK = "http://127.0.0.1:8787/github/webhook"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SWARM_", "PREFECT_"))}
    env |= {"SWARM_ROLES_DIR": str(ROOT / "roles"), "SWARM_DATA_DIR": str(tmp_path / "data")}
    return env | extra


@pytest.fixture
def sandbox() -> Iterator[SandboxServer]:
    with SandboxServer() as server:
        yield server


def _page_url(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    deadline = time.monotonic() + 120
    seen = []
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        seen.append(line)
        found = re.search(r"open (http://127\.0\.0\.1:\d+/\S+)/ in your browser", line)
        if found:
            return found.group(1)
        assert line or process.poll() is None, "".join(seen)
    raise AssertionError("".join(seen))


def _make_and_install(page: Page, name: str, permission: str) -> None:
    page.click_text(f"Create {name} on GitHub")
    page.wait_for_text([f"Create GitHub App for {ORG}", permission])
    page.click_text("Create GitHub App")
    page.wait_for_text([f"Made as {name}", f"Install {name}"])
    page.click_text(f"Install {name}")
    page.wait_for_text([f"Install {name}", "All repositories"])
    page.click_text("Install")
    page.wait_for_text([f"Made as {name} and installed."])


def test_app_create_makes_installs_and_verifies_one_app_per_identity(
    sandbox: SandboxServer, browser: Browser, tmp_path: Path, screenshots: Path
) -> None:
    args = [SWARM, "app", "create", "--github-url", sandbox.url, "--org", ORG]
    args += ["--maintainer", MAINTAINER, "--webhook-url", WEBHOOK, "--no-browser"]
    process = subprocess.Popen(
        args,
        env=_env(tmp_path),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        page = browser.page(_page_url(process) + "/")
        page.wait_for_text([f"Create {ORG}-reviewer on GitHub", "For identity default"])
        page.screenshot(screenshots / "app-create.png")
        _make_and_install(page, f"{ORG}-reviewer", "pull_requests: write")
        _make_and_install(page, f"{ORG}-triage", "issues: write")
        _make_and_install(page, f"{ORG}-writer", "contents: write")
        page.wait_for_text(["All done"])
        output, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, output
    for label in ("reviewer", "triage", "writer"):
        assert f"{ORG}-{label}[bot]" in output, output

    secrets = tmp_path / "secrets"
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o700
    for name in (
        "app-private-key.pem",
        "triage-app-private-key.pem",
        "writer-app-private-key.pem",
        "webhook-secret",
        "github-app.env",
    ):
        assert stat.S_IMODE((secrets / name).stat().st_mode) == 0o600, name
    settings = dict(
        line.split("=", 1) for line in (secrets / "github-app.env").read_text().splitlines()
    )
    assert settings["SWARM_GITHUB_API_URL"] == f"{sandbox.url}/api/v3"
    assert settings["SWARM_MAINTAINER_LOGIN"] == MAINTAINER
    assert settings["SWARM_REPOS"] == "acme/docs,acme/gadgets,acme/widgets"
    # The writer's own App, and its settings say its tokens may write contents.
    assert settings["SWARM_IDENTITIES__WRITER__CEILING"] == "writing"
    writer = sandbox.state.apps[int(settings["SWARM_IDENTITIES__WRITER__APP_ID"])]
    assert writer.registration is not None and not writer.registration.events
    assert writer.permissions["contents"] == "write"
    reviewer = sandbox.state.apps[int(settings["SWARM_APP_ID"])]
    assert reviewer.registration is not None
    assert reviewer.registration.hook_url == WEBHOOK
    assert (secrets / "webhook-secret").read_text() == reviewer.registration.webhook_secret
    assert "pull_request" in reviewer.registration.events
    # Nothing secret reached the terminal.
    assert "BEGIN" not in output and reviewer.registration.webhook_secret not in output

    # A person's next command, with the settings loaded as the output says.
    verify = subprocess.run(
        [SWARM, "verify"],
        env=_env(tmp_path, **settings),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert f"{ORG}-reviewer[bot]" in verify.stdout
