"""``swarm app create``'s page cannot be taken over by another local user or another web page.

Until issue 37 the page answered anyone at ``http://127.0.0.1:PORT/``, showed each App's
``state`` there, took any ``Host`` and took a code after its App was made: another local user
read a ``state``, fed in a code for an App of their own, and the person's only copy of the
private key was overwritten with the attacker's App's (the page then asked the person to install
the attacker's App). Now the page lives under a token only the terminal printed, answers only
``Host: 127.0.0.1:PORT``, takes one code per App once, and never writes over a key.
"""

from __future__ import annotations

import http.client
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from sandbox.github.manifests import create_app
from sandbox.github.seed import MAINTAINER, ORG
from sandbox.server import SandboxServer
from tests.cli.test_app_create_in_browser import _env
from tests.other_user import as_other_user, require_second_uid

pytestmark = pytest.mark.slow

SWARM = str(Path(sys.executable).with_name("swarm"))


@pytest.fixture
def sandbox() -> Iterator[SandboxServer]:
    with SandboxServer() as server:
        yield server


def _get(port: int, path: str, host: str | None = None) -> tuple[int, str]:
    """One GET to the page: (status, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest("GET", path, skip_host=True)
        conn.putheader("Host", host or f"127.0.0.1:{port}")
        conn.endheaders()
        answer = conn.getresponse()
        return answer.status, answer.read().decode()
    finally:
        conn.close()


def _manifest(redirect_url: str) -> dict[str, object]:
    return {
        "url": "https://mallory.example",
        "redirect_url": redirect_url,
        "default_permissions": {"pull_requests": "write", "contents": "read"},
        "hook_attributes": {"active": False},
    }


@pytest.fixture
def app_create(sandbox: SandboxServer, tmp_path: Path) -> Iterator[str]:
    with _running(sandbox, tmp_path) as url:
        yield url


@contextmanager
def _running(sandbox: SandboxServer, tmp_path: Path, *extra: str) -> Iterator[str]:
    """``swarm app create`` running against the sandbox; the page address it printed."""
    args = [SWARM, "app", "create", "--github-url", sandbox.url, "--org", ORG]
    args += ["--maintainer", MAINTAINER, "--identity", "default", "--no-browser", *extra]
    process = subprocess.Popen(
        args,
        env=_env(tmp_path),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    try:
        deadline = time.monotonic() + 120
        seen: list[str] = []
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            seen.append(line)
            found = re.search(r"open (http://127\.0\.0\.1:\d+\S*/) in your browser", line)
            if found:
                yield found.group(1)
                return
            assert line or process.poll() is None, "".join(seen)
        raise AssertionError("".join(seen))
    finally:
        process.kill()
        process.wait()


def test_another_local_user_cannot_feed_the_page_a_code(
    app_create: str, sandbox: SandboxServer, tmp_path: Path
) -> None:
    require_second_uid()
    port = urlsplit(app_create).port
    assert port is not None
    # Mallory's own App on GitHub, made to send its code back to the person's page.
    code = create_app(sandbox.state, ORG, "mallory-app", _manifest(f"http://127.0.0.1:{port}/"))

    _get(port, "/")  # the modules a request needs, imported before the fork drops to nobody

    def attack() -> str:
        status, page = _get(port, "/")
        state = re.search(r"state=([\w-]+)", page)
        if state is None:
            return f"{status} no state"
        fed, _ = _get(port, f"/created?state={state.group(1)}&code={code}")
        return f"{status} fed {fed}"

    assert as_other_user(attack) == "404 no state"
    assert code in sandbox.state.manifest_codes  # never converted
    assert not (tmp_path / "secrets" / "app-private-key.pem").exists()


def test_a_page_reached_under_another_host_name_is_refused(app_create: str) -> None:
    parts = urlsplit(app_create)
    assert parts.port is not None
    # A web page of rebound.example whose name now resolves to 127.0.0.1 (DNS rebinding).
    status, page = _get(parts.port, parts.path, host=f"rebound.example:{parts.port}")
    assert status == 421
    assert "state=" not in page
    assert _get(parts.port, parts.path)[0] == 200


def test_a_second_code_for_a_made_app_is_refused_and_the_key_kept(
    app_create: str, sandbox: SandboxServer, tmp_path: Path
) -> None:
    parts = urlsplit(app_create)
    assert parts.port is not None
    base = parts.path.rstrip("/")
    status, page = _get(parts.port, parts.path)
    assert status == 200
    found = re.search(r"state=([\w-]+)", page)
    assert found is not None
    state = found.group(1)
    redirect = f"http://127.0.0.1:{parts.port}{base}/created"
    mine = create_app(sandbox.state, ORG, f"{ORG}-reviewer", _manifest(redirect))
    assert _get(parts.port, f"{base}/created?state={state}&code={mine}")[0] == 303
    key = tmp_path / "secrets" / "app-private-key.pem"
    kept = key.read_text()
    theirs = create_app(sandbox.state, ORG, "mallory-app", _manifest(redirect))
    status, _ = _get(parts.port, f"{base}/created?state={state}&code={theirs}")
    assert status == 409
    assert key.read_text() == kept
    assert theirs in sandbox.state.manifest_codes  # never converted


def test_force_moves_an_existing_key_aside_and_never_writes_over_it(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    secrets = tmp_path / "secrets"
    secrets.mkdir(mode=0o700)
    key = secrets / "app-private-key.pem"
    key.write_text("the only copy of an older App's key\n")
    with _running(sandbox, tmp_path, "--force"):
        kept = list(secrets.glob("app-private-key.pem.bak-*"))
        assert [k.read_text() for k in kept] == ["the only copy of an older App's key\n"]
        assert not key.exists()
