"""The real worker on either store backend: sandbox GitHub, the anthropic SDK against the
scripted model over HTTP, and the store on SQLite or on a fresh PostgreSQL schema."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import ExitStack
from typing import Any

import pytest

from tests.store.backends import fresh_pg_schema
from tests.worker.conftest import Swarm, make_swarm

__all__ = ["backend_swarm", "first_user_text", "make_swarm", "system_text"]


@pytest.fixture(params=["sqlite", "postgresql"])
async def backend_swarm(
    request: pytest.FixtureRequest,
    make_swarm: Callable[..., Swarm],
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[Swarm]:
    with ExitStack() as stack:
        if request.param == "postgresql":
            url = stack.enter_context(fresh_pg_schema(request.getfixturevalue("pg_url")))
            monkeypatch.setenv("SWARM_STORE_URL", url)
        made = make_swarm()
        try:
            yield made
        finally:
            await made.runtime.aclose()


def system_text(request: dict[str, Any]) -> str:
    return "\n".join(str(block.get("text", "")) for block in request["system"])


def first_user_text(request: dict[str, Any]) -> str:
    content = request["messages"][0]["content"]
    return "\n".join(str(b.get("text", "")) for b in content if b.get("type") == "text")
