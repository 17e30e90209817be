"""Security tests: the attacker's input goes in through the real path (sandbox GitHub over HTTP,
githubkit, the anthropic SDK, the store on SQLite and PostgreSQL)."""

from __future__ import annotations

from typing import Any

import httpx

from sandbox.server import SandboxServer
from tests.store.backends import pg_session_url, sqlite_template, store_target
from tests.worker.conftest import Swarm, make_swarm, swarm

__all__ = [
    "as_user",
    "bot_reviews",
    "make_swarm",
    "pg_session_url",
    "sqlite_template",
    "store_target",
    "swarm",
]


def as_user(sandbox: SandboxServer, login: str) -> httpx.Client:
    """An HTTP client acting as ``login`` (a person with a PAT) against the sandbox's REST API."""
    token = sandbox.state.add_pat(login)
    return httpx.Client(
        base_url=sandbox.url, headers={"Authorization": f"Bearer {token}"}, timeout=10
    )


def bot_reviews(swarm: Swarm, repo: str, number: int) -> list[Any]:
    pull = swarm.sandbox.state.pull(repo, number).pull
    assert pull is not None
    return [r for r in pull.reviews if r.user_login.endswith("[bot]")]
