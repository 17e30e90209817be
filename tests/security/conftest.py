"""Security tests: the attacker's input goes in through the real path (sandbox GitHub over HTTP,
githubkit, the anthropic SDK, the store on SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from sandbox.server import SandboxServer
from tests.store.backends import StoreTarget, pg_session_url, sqlite_template, store_target
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
    return [r for r in pull.reviews if r.user_login.endswith("[bot]") and not r.files_a_reply]


@pytest.fixture
def two_swarms(
    make_swarm: Callable[..., Swarm], store_target: StoreTarget, monkeypatch: pytest.MonkeyPatch
) -> tuple[Swarm, Swarm]:
    """Two runtimes (two processes' worth: own stores, dispatchers, gateways) over one store."""
    if store_target.url is not None:
        monkeypatch.setenv("SWARM_STORE_URL", store_target.url)
    monkeypatch.setenv("SWARM_DATA_DIR", str(store_target.data_dir))
    return make_swarm(), make_swarm()
