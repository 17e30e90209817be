"""Calls reuse the identity's connections, across githubkit's per-call clients."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pydantic import SecretStr

from agents.transport.auth import InstallationTokenAuth
from agents.transport.client import GitHubTransport

AUTH = InstallationTokenAuth.fixed(SecretStr("ghs_keepalive"), "swarm-reviewer[bot]")


class _CountingServer(ThreadingHTTPServer):
    connections = 0


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive unless the client closes

    def setup(self) -> None:
        super().setup()
        assert isinstance(self.server, _CountingServer)
        self.server.connections += 1

    def do_GET(self) -> None:
        body = b"{}"
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def server() -> Iterator[_CountingServer]:
    httpd = _CountingServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def url(server: _CountingServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


@pytest.mark.anyio
async def test_sequential_calls_from_the_event_loop_share_one_connection(
    server: _CountingServer,
) -> None:
    transport = GitHubTransport(url(server), identity="swarm-reviewer[bot]")
    for _ in range(5):
        assert (await transport.asend("GET", "/rate_limit", auth=AUTH)).status_code == 200
    assert server.connections == 1
    await transport.aclose()
