"""Pytest fixtures for a live sandbox GitHub; the root conftest loads this as a plugin."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from sandbox.github.state import SandboxState
from sandbox.server import SandboxServer

# What in-process flows and workers against the sandbox set beside its credentials.
# GitHub asks for a second between one identity's mutations and the throttle keeps to it
# (tests/github/test_throttle_pacing.py proves the gap on a stepped clock). The sandbox does not
# enforce that guidance, so here the gap only made tests wait: a fix round's ~23 writes slept
# ~22 s of a 35 s test, about a fifth of the suite's worker time. Every other limit stays
# GitHub's: content creation per minute and hour, points, concurrency.
SANDBOX_PACING = {"SWARM_GITHUB_LIMITS__MIN_WRITE_INTERVAL": "0.05"}


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
