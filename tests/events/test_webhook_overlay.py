"""`swarm webhook serve --overlay ROLE`: the receiver built as the command builds it starts every
run with that session overlay, a command's focus riding above it (tests/cli/test_serve_overlay.py:
an unknown role is refused before anything starts)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from agents.settings.model import load_settings
from flows.run.request import RunRequest
from flows.webhook.app import create_webhook_app
from flows.webhook.enqueue import InProcessEnqueuer, Overlaid
from flows.webhook.serve import build_receiver
from flows.webhook.sink import EventSink
from sandbox.github.seed import COLLABORATORS, REPOS, WIDGETS, WIDGETS_PR_CLEAN, WRITER
from sandbox.github.webhooks import SandboxWebhooks
from sandbox.server import SandboxServer
from tests.events.harness import SECRET, URL, Started, sandbox_env, sandbox_server

__all__ = ["sandbox_server"]

pytestmark = pytest.mark.anyio


@pytest.fixture
def secret_env(
    sandbox_server: SandboxServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox_env(sandbox_server, tmp_path, monkeypatch)
    secret_file = tmp_path / "webhook-secret"
    secret_file.write_text(SECRET + "\n")
    monkeypatch.setenv("SWARM_WEBHOOK_SECRET_FILE", str(secret_file))
    for name in REPOS:
        sandbox_server.state.repo(name).collaborators.update(COLLABORATORS)


async def test_every_run_the_server_starts_carries_its_session_overlay(
    secret_env: None, sandbox_server: SandboxServer
) -> None:
    receiver, shutdown = build_receiver(
        load_settings(), deployment=None, concurrency=1, overlay="security-reviewer"
    )
    assert isinstance(receiver.sink, EventSink) and isinstance(receiver.sink.enqueuer, Overlaid)
    inner = receiver.sink.enqueuer.inner
    assert isinstance(inner, InProcessEnqueuer)
    inner.runner = started = Started()
    state = sandbox_server.state
    hooks = SandboxWebhooks(state, SECRET, api_url=sandbox_server.url)
    transport = httpx.ASGITransport(app=create_webhook_app(receiver))
    try:
        async with httpx.AsyncClient(transport=transport) as client:
            number = state.add_pull(WIDGETS, "Add x", {"src/widgets/x.py": "X = 1\n"}).number
            state.add_comment(WIDGETS, WIDGETS_PR_CLEAN, "/swarm review security", author=WRITER)
            for delivery in hooks.take():
                answer = await client.post(URL, content=delivery.body, headers=delivery.headers)
                assert answer.status_code == 202, answer.text
            await inner.drain()
    finally:
        hooks.close()
        await shutdown()
    pushed, commanded = started.requests
    assert pushed == RunRequest(
        targets=(f"{WIDGETS}#{number}",), role="reviewer", overlay="security-reviewer"
    )
    assert (commanded.overlay, commanded.focus) == ("security-reviewer", "security-reviewer")
