"""A sender without the secret cannot hold the receiver's connections: ``swarm webhook serve`` as
a real process, attacked over real sockets. A request head, a body or a kept-alive connection
that stalls is cut off at its own deadline (each test sets only its own short, the others long,
so no other guard can be what cut it); at the connection cap, stalled connections make room for
a new one, and the process never runs out of files: ``/healthz`` answers and a signed delivery
goes through while the attack is still open."""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from agents.store import Store
from flows.webhook.connections import DESCRIPTOR_RESERVE
from sandbox.github.seed import MAINTAINER, WIDGETS, WIDGETS_PR_CLEAN
from sandbox.github.webhooks import SandboxWebhooks
from sandbox.server import SandboxServer
from tests.events.harness import SECRET, sandbox_env, sandbox_server
from tests.events.served import Served, limit_files, serving
from tests.ports import closed_port
from tests.waiting import wait_for

__all__ = ["sandbox_server"]

SHORT = "0.5"
# Long enough that no test ends on a deadline it does not test.
LONG = "120"
# How long a test waits for the server to close a connection before it calls it held.
HELD = 30.0
HALF_HEAD = b"POST /github/webhook HTTP/1.1\r\nHost: swarm.test\r\nX-GitHub-Event: ping\r\n"
HEALTH = b"GET /healthz HTTP/1.1\r\nHost: swarm.test\r\n\r\n"


@contextmanager
def receiver(
    sandbox_server: SandboxServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    files: int | None = None,
    **limits: str,
) -> Iterator[Served]:
    """The receiver with every read limit long but those given (``header_timeout_s="0.5"``)."""
    sandbox_env(sandbox_server, tmp_path, monkeypatch)
    settings = {"header_timeout_s": LONG, "body_timeout_s": LONG, "idle_timeout_s": LONG}
    for name, value in {**settings, **limits}.items():
        monkeypatch.setenv(f"SWARM_WEBHOOK_{name.upper()}", value)
    with serving(closed_port(), tmp_path, monkeypatch, files=files) as served:
        yield served


def connect(served: Served) -> socket.socket:
    address = urlsplit(served.url)
    return socket.create_connection((address.hostname or "", address.port or 80), timeout=HELD)


def opening(served: Served) -> socket.socket:
    """A connection to the receiver on its way: connected once it is writable."""
    address = urlsplit(served.url)
    sock = socket.socket()
    sock.setblocking(False)
    sock.connect_ex((address.hostname or "", address.port or 80))
    return sock


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closes ``sock`` (what it sent before is read and dropped); False when
    it is still open after :data:`HELD` seconds."""
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        pass  # cut off with a reset: closed just as well
    return True


def closed_now(sock: socket.socket) -> bool:
    """Whether ``sock`` is closed by the server already (no waiting)."""
    readable, _, _ = select.select([sock], [], [], 0)
    if not readable:
        return False
    try:
        return sock.recv(65536, socket.MSG_PEEK) == b""
    except ConnectionResetError:
        return True


@contextmanager
def kept_alive(served: Served) -> Iterator[socket.socket]:
    """A connection that had one ``/healthz`` answered and is kept alive."""
    with connect(served) as sock:
        sock.sendall(HEALTH)
        assert answer(sock) == b"HTTP/1.1 200 OK"
        yield sock


def answer(sock: socket.socket) -> bytes:
    """One whole response off ``sock``: its status line and headers, and its body by length."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head.split(b"\r\n", 1)[0]


@pytest.mark.parametrize("sent", [b"", HALF_HEAD], ids=["nothing", "half-a-head"])
def test_a_sender_whose_request_head_stalls_is_cut_off_at_the_header_timeout(
    sandbox_server: SandboxServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sent: bytes
) -> None:
    with (
        receiver(sandbox_server, tmp_path, monkeypatch, header_timeout_s=SHORT) as served,
        connect(served) as sock,
    ):
        sock.sendall(sent)
        assert closed_by_server(sock)


def test_a_sender_dribbling_its_head_a_byte_at_a_time_is_cut_off_all_the_same(
    sandbox_server: SandboxServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each byte comes well within the timeout of the last: only a deadline for the whole head,
    # not one for a pause, ends this.
    head = HALF_HEAD + b"X-Padding: " + b"a" * 1_000
    with (
        receiver(sandbox_server, tmp_path, monkeypatch, header_timeout_s=SHORT) as served,
        connect(served) as sock,
    ):
        cut = False
        for byte in head:
            try:
                sock.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                cut = True
                break
            if closed_now(sock):
                cut = True
                break
            time.sleep(0.02)
        assert cut, "the whole dribbled head was taken"


def test_a_kept_alive_connection_that_begins_a_next_request_and_stalls_is_cut_off(
    sandbox_server: SandboxServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # uvicorn's keep-alive timer stops at the first byte of a next request, and nothing else
    # times the rest of it.
    with (
        receiver(sandbox_server, tmp_path, monkeypatch, header_timeout_s=SHORT) as served,
        kept_alive(served) as sock,
    ):
        sock.sendall(b"GET /heal")
        assert closed_by_server(sock)


def test_a_sender_whose_body_stalls_is_cut_off_at_the_body_timeout_without_a_traceback(
    sandbox_server: SandboxServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    head = HALF_HEAD + b"Content-Type: application/json\r\nContent-Length: 4096\r\n\r\n"
    with (
        receiver(sandbox_server, tmp_path, monkeypatch, body_timeout_s=SHORT) as served,
        connect(served) as sock,
    ):
        sock.sendall(head + b'{"zen": "')
        assert closed_by_server(sock)
        # The app was reading that body when it was cut off: it says so in one line.
        said = ("went away before its body", "Exception in ASGI application")
        wait_for(lambda: any(s in served.log() for s in said), "the app's word on it", 30)
        assert "Traceback" not in served.log()
        assert "a sender went away before its body was in: nothing recorded" in served.log()


def test_an_idle_kept_alive_connection_is_closed_at_the_idle_timeout(
    sandbox_server: SandboxServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with (
        receiver(sandbox_server, tmp_path, monkeypatch, idle_timeout_s=SHORT) as served,
        kept_alive(served) as sock,
    ):
        # uvicorn's own keep-alive timer would close it too, after 5 s: waiting less than that
        # is the only way to tell the setting was used at all.
        sock.settimeout(4.0)
        assert closed_by_server(sock)


def test_at_the_connection_cap_stalled_senders_make_room_and_a_delivery_still_goes_through(
    sandbox_server: SandboxServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cap = 16
    # The process may open the cap and its reserve, no more: an attacker holding more stalled
    # connections than that would take the last file, were they all kept.
    files = cap + DESCRIPTOR_RESERVE
    hooks = SandboxWebhooks(sandbox_server.state, SECRET, api_url=sandbox_server.url)
    with (
        receiver(
            sandbox_server, tmp_path, monkeypatch, files=files, max_connections=str(cap)
        ) as served,
        ExitStack() as stack,
    ):
        # The whole flood arrives at once: every connection waits in the listen queue while
        # the receiver is stopped, and meets it in one turn of its event loop when it goes on.
        os.kill(served.pid, signal.SIGSTOP)
        try:
            stalled = [stack.enter_context(opening(served)) for _ in range(files + 32)]
        finally:
            os.kill(served.pid, signal.SIGCONT)
        for sock in stalled:
            _, writable, _ = select.select([], [sock], [], HELD)
            assert writable, "a connection was never accepted"
            sock.setblocking(True)
            sock.sendall(HALF_HEAD)

        assert _probe_through_the_flood(f"{served.url}/healthz").status_code == 200
        # Not even for a moment did the flood take the process's last file.
        assert "Too many open files" not in served.log()

        # Stalled connections made room (the kernel may still hold some of the flood, so
        # how many is not fixed yet).
        assert "makes room for a new one" in served.log()

        sandbox_server.state.add_comment(WIDGETS, WIDGETS_PR_CLEAN, "Thanks!", author=MAINTAINER)
        [delivery] = hooks.take()
        sent = httpx.post(
            f"{served.url}/github/webhook",
            content=delivery.body,
            headers=delivery.headers,
            timeout=HELD,
        )
        assert sent.status_code == 200
    hooks.close()
    with Store.open(None, tmp_path / "data") as store:
        assert store.get_delivery(delivery.delivery_id) is not None


def _probe_through_the_flood(url: str, attempts: int = 3) -> httpx.Response:
    """A probe as a monitor sends it: again if its connection was cut. The kernel completes
    some of the flood's handshakes late, so flooders may be accepted after the probe, in the same
    turn of the event loop and before its request is read; more than the cap of them make the
    probe the stalest of that turn (seen once on a loaded 2-core machine). A probe sent after
    them gets in; without room made at the cap, none ever would."""
    for _ in range(attempts - 1):
        with suppress(httpx.ReadError, httpx.RemoteProtocolError):
            return httpx.get(url, timeout=HELD)
    return httpx.get(url, timeout=HELD)


@pytest.mark.parametrize(
    ("setting", "value", "line"),
    [
        (
            "SWARM_WEBHOOK_MAX_CONNECTIONS",
            "4096",
            f"error: SWARM_WEBHOOK_MAX_CONNECTIONS: 4096 connections and the {DESCRIPTOR_RESERVE} "
            f"files the receiver keeps for itself need {4096 + DESCRIPTOR_RESERVE} open files, "
            "and this process may open at most 1024 (ulimit -Hn): lower the setting or raise "
            "the limit",
        ),
        (
            "SWARM_WEBHOOK_HEADER_TIMEOUT_S",
            "0",
            "SWARM_WEBHOOK_HEADER_TIMEOUT_S: Input should be greater than 0",
        ),
    ],
    ids=["cap-over-the-file-limit", "no-header-timeout"],
)
def test_read_limits_the_receiver_cannot_keep_stop_it_with_one_line(
    sandbox_server: SandboxServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    setting: str,
    value: str,
    line: str,
) -> None:
    sandbox_env(sandbox_server, tmp_path, monkeypatch)
    secret_file = tmp_path / "webhook-secret"
    secret_file.write_text(SECRET + "\n")
    monkeypatch.setenv("SWARM_WEBHOOK_SECRET_FILE", str(secret_file))
    monkeypatch.setenv(setting, value)
    done = subprocess.run(
        [sys.executable, "-m", "flows", "webhook", "serve", "--port", str(closed_port())],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit_files(1024),
        check=False,
    )
    assert done.returncode != 0
    assert line in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
