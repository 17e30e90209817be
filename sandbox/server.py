"""Run the sandbox GitHub on a loopback port, in a background thread or in the foreground."""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import uvicorn

from sandbox.github.app import create_app
from sandbox.github.clock import SandboxClock
from sandbox.github.records import TOKEN_FORMATS
from sandbox.github.seed import COLLABORATORS
from sandbox.github.state import SandboxState
from sandbox.github.webhooks import Forwarder, SandboxWebhooks

_START_TIMEOUT_S = 10.0
_BACKLOG = 4096


class SandboxServer:
    """``with SandboxServer() as srv: GitHub(..., base_url=srv.url)``; port 0 = a free port."""

    def __init__(
        self, state: SandboxState | None = None, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.state = state or SandboxState()
        self.host = host
        self._requested_port = port
        self._socket: socket.socket | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        if self._socket is None:
            raise RuntimeError(
                "SandboxServer is not started; call start() or use it as a context manager"
            )
        return int(self._socket.getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> SandboxServer:
        if self._thread is not None:
            return self
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Accepted sockets inherit this; without it Nagle + delayed ACK add ~40 ms a response.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            sock.bind((self.host, self._requested_port))
            # Listening here, not first in uvicorn's thread: with SO_REUSEADDR two sandboxes
            # starting at once both bind 8765, and the second's listen fails. In uvicorn's thread
            # that was a RuntimeError, and `swarm sandbox serve` never tried a free port (a doc
            # walk-through failed so when another started beside it, issue 33).
            sock.listen(_BACKLOG)
        except OSError:
            sock.close()
            raise
        self._socket = sock
        config = uvicorn.Config(
            create_app(self.state),
            log_level="warning",
            access_log=False,
            lifespan="off",
            backlog=_BACKLOG,
            timeout_keep_alive=30,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="sandbox-github", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"sandbox GitHub did not start on {self.host}:{self._requested_port}"
                )
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=_START_TIMEOUT_S)
        if self._socket is not None:
            self._socket.close()
        self._server = self._thread = None

    def __enter__(self) -> SandboxServer:
        return self.start()

    def __exit__(self, *_exc_info: object) -> None:
        self.stop()


DEFAULT_DIR = Path(".swarm/sandbox")
DEFAULT_PORT = 8765


def walkthrough_settings(directory: Path, repos: Sequence[str] | None = None) -> list[str]:
    """What ``sandbox.env`` adds for people trying the CLI by hand: the sandbox's own store
    (not the demo's, whose records would say every PR is already reviewed) and its repos."""
    from sandbox.github.seed import REPOS

    store = (directory / "swarm.db").resolve()
    return [f"SWARM_STORE_URL=sqlite:///{store}", f"SWARM_REPOS={','.join(repos or REPOS)}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="swarm sandbox serve", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument(
        "--port", type=int, default=None, help=f"default {DEFAULT_PORT}, or a free one if taken"
    )
    parser.add_argument(
        "--dir",
        type=Path,
        default=DEFAULT_DIR,
        help="the sandbox's own folder: the Apps' keys, sandbox.env and the store of its runs",
    )
    parser.add_argument("--speed", type=float, default=1.0, help="sandbox seconds per real second")
    parser.add_argument(
        "--token-format",
        choices=TOKEN_FORMATS,
        default=None,
        help="the installation tokens to mint: classic (ghs_ + 36), long (~520 with dots) or "
        "stateless (ghs_<app id>_<JWT>); default $SANDBOX_TOKEN_FORMAT, else classic",
    )
    parser.add_argument(
        "--releases",
        action="store_true",
        help="also serve real release PRs (sandbox.github.releases; downloaded from PyPI once, "
        "then cached) and name only their repositories in sandbox.env",
    )
    parser.add_argument(
        "--webhook-url",
        help="send a signed delivery here for every PR opened, push, comment, reply and issue "
        "opened (the secret is written to DIR/webhook-secret and named in sandbox.env)",
    )
    args = parser.parse_args(argv)
    state = SandboxState(SandboxClock(speed=args.speed), token_format=args.token_format)
    # People trying it by hand act as the maintainer, who administers the repositories (a
    # `/swarm` command counts only from someone with write access).
    released: list[str] = []
    if args.releases:
        from sandbox.github.releases import RELEASES, ReleasesUnavailable, add_release_pulls

        try:
            add_release_pulls(state)
            released = [release.repo for release in RELEASES]
        except ReleasesUnavailable as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    for repo in state.repos.values():
        repo.collaborators.update(COLLABORATORS)
    ports = [args.port] if args.port is not None else [DEFAULT_PORT, 0]
    for port in ports:
        try:
            server = SandboxServer(state, host=args.host, port=port).start()
            break
        except OSError as exc:
            failure = exc
    else:
        print(
            f"error: cannot listen on {args.host}:{args.port} ({failure.strerror}); "
            "is another sandbox running? pass another --port",
            file=sys.stderr,
        )
        return 2
    env = state.write_credentials(args.dir, server.url)
    settings = walkthrough_settings(args.dir, released)
    forwarder = None
    if args.webhook_url:
        forwarder, secret_file = _forward_webhooks(state, args.dir, args.webhook_url, server.url)
        settings.append(f"SWARM_WEBHOOK_SECRET_FILE={secret_file}")
    with env.open("a", encoding="utf-8") as handle:
        handle.write("\n".join(settings) + "\n")
    shown = os.path.relpath(env) if not os.path.relpath(env).startswith("..") else str(env)
    print(
        f"sandbox GitHub at {server.url} (Ctrl-C stops it)\n"
        f"settings: {env}\n"
        f"in another terminal: set -a; . {shown}; set +a; uv run swarm run --dry-run",
        flush=True,
    )
    if forwarder is not None:
        print(f"webhooks: a signed delivery to {args.webhook_url} for every change", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        if forwarder is not None:
            forwarder.stop()
        server.stop()
    return 0


def _forward_webhooks(
    state: SandboxState, directory: Path, url: str, api_url: str
) -> tuple[Forwarder, Path]:
    """A new webhook secret (0600, in the sandbox's folder) and the thread that delivers."""
    secret = secrets.token_urlsafe(32)
    path = (directory / "webhook-secret").resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(secret + "\n")
    hooks = SandboxWebhooks(state, secret, api_url=api_url)
    return Forwarder(hooks, url, report=lambda line: print(line, flush=True)).start(), path
