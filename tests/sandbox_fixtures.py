"""Pytest fixtures for a live sandbox GitHub; the root conftest loads this as a plugin."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from sandbox.github.state import SandboxState
from sandbox.server import SandboxServer


@pytest.fixture
def sandbox() -> Iterator[SandboxServer]:
    """A started sandbox GitHub with the default seed; ``sandbox.url``, ``sandbox.state``."""
    with SandboxServer() as server:
        yield server


@pytest.fixture
def make_sandbox() -> Iterator[Callable[[SandboxState], SandboxServer]]:
    """Start a sandbox over a state you built (custom clock, limits, knobs); stopped afterwards."""
    started: list[SandboxServer] = []

    def make(state: SandboxState) -> SandboxServer:
        server = SandboxServer(state).start()
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()
