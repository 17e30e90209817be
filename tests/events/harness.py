"""A webhook receiver wired as ``swarm webhook serve`` wires it, over a real store and the
sandbox GitHub, with the flow runner replaced by one that records what it was asked to start
(the end-to-end tests in tests/flows run the real flow)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest

from agents.posting.keys import review_key_prefix
from agents.store import Store
from flows.run.bot import BotCommands
from flows.run.gate import decide
from flows.run.request import RunRequest
from flows.webhook.app import WebhookReceiver, create_webhook_app
from flows.webhook.enqueue import InProcessEnqueuer
from flows.webhook.learning import FeedbackLearner
from flows.webhook.queue import DeliveryQueue
from flows.webhook.sink import EventSink
from sandbox.github.seed import (
    COLLABORATORS,
    REPOS,
    REVIEWER_BOT,
    REVIEWER_INSTALLATION_ID,
    credentials_env,
)
from sandbox.github.webhooks import Delivery, SandboxWebhooks
from sandbox.server import SandboxServer
from tests.paths import ROOT

SECRET = "whsec-planted-7c1e9a0b54d2"
URL = "http://swarm.test/github/webhook"


@dataclass
class Started:
    """Flow runs the receiver asked for, in order."""

    requests: list[RunRequest] = field(default_factory=list)

    async def __call__(self, request: RunRequest) -> None:
        self.requests.append(request)


@dataclass
class Events:
    server: SandboxServer
    hooks: SandboxWebhooks
    store: Store
    started: Started
    client: httpx.AsyncClient
    enqueuer: InProcessEnqueuer[RunRequest]
    # Feedback learning, queued as `swarm webhook serve` queues it (the real learner).
    learner: InProcessEnqueuer[dict[str, Any]]

    @property
    def state(self) -> Any:
        return self.server.state

    async def post(self, delivery: Delivery, **headers: str) -> httpx.Response:
        sent = {**delivery.headers, **headers}
        response = await self.client.post(URL, content=delivery.body, headers=sent)
        await self.enqueuer.drain()
        await self.learner.drain()
        return response

    def bot_writes(self) -> list[Any]:
        return [
            r
            for r in self.state.requests_by(REVIEWER_BOT)
            if r.is_write and r.route != "/installation/token"
        ]


def sandbox_env(server: SandboxServer, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in list(os.environ):
        if key.startswith("SWARM_"):
            monkeypatch.delenv(key)
    for key, value in credentials_env(server.state, root / "keys", server.url).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("SWARM_DATA_DIR", str(root / "data"))
    monkeypatch.setenv("SWARM_ROLES_DIR", str(ROOT / "roles"))
    monkeypatch.setenv("SWARM_REPOS", ",".join(REPOS))
    monkeypatch.setenv("SWARM_MODEL", "scripted")


@pytest.fixture
def sandbox_server() -> Iterator[SandboxServer]:
    with SandboxServer() as server:
        yield server


@asynccontextmanager
async def receiver_over(
    server: SandboxServer, store: Store, *, max_body: int = 64 * 1024
) -> AsyncIterator[Events]:
    from agents.roles.files import load_roles
    from agents.settings.model import load_settings

    settings = load_settings()
    for name in REPOS:
        server.state.repo(name).collaborators.update(COLLABORATORS)
    hooks = SandboxWebhooks(server.state, SECRET, api_url=server.url)
    started = Started()
    enqueuer = InProcessEnqueuer(2, runner=started, deliveries=store)
    roles = load_roles(settings.roles_dir)
    commands = BotCommands(settings, roles, "default")
    learner = InProcessEnqueuer(2, runner=FeedbackLearner(settings, roles, commands, store, store))
    receiver = WebhookReceiver(
        secret=SECRET,
        deliveries=store,
        sink=EventSink(enqueuer, commands, learner, decider=partial(decide, store)),
        max_body_bytes=max_body,
        repos=settings.repos,
        installations=(REVIEWER_INSTALLATION_ID,),
        reviewed=lambda repo, n: bool(store.posted_review_keys(review_key_prefix(repo, n))),
        queue=DeliveryQueue(store),
    )
    app = create_webhook_app(receiver)
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(transport=transport) as client:
            yield Events(server, hooks, store, started, client, enqueuer, learner)
    finally:
        hooks.close()
        await commands.aclose()


@pytest.fixture
async def events(
    sandbox_server: SandboxServer, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Events]:
    """The receiver over the sandbox and the test's store, with the sandbox's settings."""
    sandbox_env(sandbox_server, tmp_path, monkeypatch)
    async with receiver_over(sandbox_server, store) as ready:
        yield ready
