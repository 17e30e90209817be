"""The local Prefect server is no open door: another local user gets nothing from it.

Until issue 37 swarm's ``prefect server start`` had no credential, and any local user can reach a
loopback port: another user read every run's parameters, logs and artifacts, wrote runs, and
created a flow run of a deployment ``swarm serve`` served (run then with this user's App key and
model key). Now the server asks for an auth string only this user can read, and a client sends it
only to a listener of this user's. The other user here is a real second uid (``nobody``).
"""

from __future__ import annotations

import json
import os
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

from flows.local.env import prepare_prefect_env
from flows.local.prefect_server import (
    LocalServer,
    auth_file,
    auth_header,
    auth_string,
    ensure_running,
    prefect_home,
    status,
    stop,
)
from tests.browser import Browser
from tests.other_user import as_other_user, require_second_uid

pytestmark = pytest.mark.slow


def _call(url: str, body: Mapping[str, object] | None, headers: dict[str, str]) -> str:
    """The status of one API call (POST with a JSON body, else GET), as a string."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers=headers)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return str(reply.status)
    except urllib.error.HTTPError as refused:
        return str(refused.code)


@pytest.fixture(scope="module")
def local_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    data = tmp_path_factory.mktemp("credential") / "data"
    home = prefect_home(data)
    server, _ = ensure_running(home)
    try:
        yield server
    finally:
        stop(home)


def test_another_local_user_can_neither_read_nor_create_runs(local_server: LocalServer) -> None:
    require_second_uid()
    api = local_server.api_url
    mine = auth_header(auth_string(local_server.home))
    flow = {"name": "swarm-run"}
    # This user, with the auth string: a flow and a run of it, then read back.
    assert _call(f"{api}/flows/", flow, mine) in ("200", "201")
    assert _call(f"{api}/flow_runs/filter", {"limit": 5}, mine) == "200"

    def attack() -> str:
        answers = [
            _call(f"{api}/flow_runs/filter", {"limit": 5}, {}),
            _call(f"{api}/logs/filter", {"limit": 5}, {}),
            _call(f"{api}/artifacts/filter", {"limit": 5}, {}),
            _call(f"{api}/deployments/filter", {"limit": 5}, {}),
            _call(f"{api}/flows/", flow, {}),
            _call(f"{api}/admin/settings", None, {}),
        ]
        try:
            auth_file(local_server.home).read_text()
            answers.append("read the auth file")
        except PermissionError:
            answers.append("PermissionError")
        return " ".join(answers)

    assert as_other_user(attack) == "401 401 401 401 401 401 PermissionError"
    # The UI still loads, and tells the browser to ask for the password.
    with urllib.request.urlopen(f"{local_server.url}/ui-settings", timeout=10) as reply:
        assert json.loads(reply.read())["auth"] == "BASIC"


def test_the_auth_string_is_private_and_stable(local_server: LocalServer) -> None:
    path = auth_file(local_server.home)
    assert path.stat().st_mode & 0o777 == 0o600
    assert local_server.home.stat().st_mode & 0o777 == 0o700
    assert auth_string(local_server.home) == auth_string(local_server.home)
    assert len(auth_string(local_server.home)) >= 40
    # The server's settings page does not hand the auth string out to whoever holds it.
    reply = urllib.request.Request(
        f"{local_server.api_url}/admin/settings", headers=auth_header(auth_string(path.parent))
    )
    with urllib.request.urlopen(reply, timeout=10) as answer:
        assert auth_string(local_server.home) not in answer.read().decode()


@contextmanager
def _squatter() -> Iterator[tuple[int, list[int]]]:
    """Another user listening on a loopback port: (its port, [bytes it received])."""
    ready_r, ready_w = os.pipe()
    done_r, done_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(ready_r)
            os.close(done_r)
            from tests.other_user import _become_other_user

            _become_other_user()
            listener = socket.socket()
            listener.bind(("127.0.0.1", 0))
            listener.listen(8)
            listener.settimeout(1.0)
            os.write(ready_w, str(listener.getsockname()[1]).encode())
            count = 0
            for _ in range(10):
                try:
                    conn, _addr = listener.accept()
                except TimeoutError:
                    continue
                conn.settimeout(1.0)
                try:
                    while chunk := conn.recv(4096):
                        count += len(chunk)
                except OSError:
                    pass
                conn.close()
            os.write(done_w, str(count).encode())
        finally:
            os._exit(0)
    os.close(ready_w)
    os.close(done_w)
    port = int(os.read(ready_r, 16))
    received: list[int] = []
    try:
        yield port, received
    finally:
        received.append(int(os.read(done_r, 16) or b"-1"))
        os.waitpid(pid, 0)


def test_a_client_sends_nothing_to_a_port_another_user_listens_on(tmp_path: Path) -> None:
    require_second_uid()
    home = prefect_home(tmp_path / "data")
    home.mkdir(parents=True, mode=0o700)
    auth_string(home)
    with _squatter() as (port, received):
        # The record says our server (a live pid) is on the port the other user now holds.
        (home / "server.json").write_text(json.dumps({"pid": os.getpid(), "port": port}))
        assert status(home) is None
    assert received == [0]


def test_the_ui_asks_for_the_password_and_shows_runs_once_given_it(
    local_server: LocalServer, browser: Browser
) -> None:
    runs = f"{local_server.url}/runs"
    stranger = browser.page(runs)
    assert "Runs" not in stranger.wait_for_text(["Login"], timeout=60)
    shown = browser.page(runs, password=auth_string(local_server.home))
    text = shown.wait_for_text(["Dashboard", "Deployments", "Runs"], timeout=60)
    assert "Login" not in text
    assert "Authentication failed" not in text


def test_no_swarm_process_opens_prefects_runner_web_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Prefect's runner serves run counts and a shutdown endpoint, with no credential, on
    localhost:8080 when ``PREFECT_RUNNER_SERVER_ENABLE`` is set: never in a swarm process."""
    monkeypatch.setenv("PREFECT_RUNNER_SERVER_ENABLE", "true")
    prepare_prefect_env()
    assert os.environ["PREFECT_RUNNER_SERVER_ENABLE"] == "false"
