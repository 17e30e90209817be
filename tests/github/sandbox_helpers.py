"""Gateways pointed at a running sandbox GitHub, on the sandbox's (compressed) clock."""

from __future__ import annotations

from sandbox.github.clock import SandboxClock
from sandbox.github.limits import RateLimits
from sandbox.github.seed import REVIEWER_BOT, REVIEWER_INSTALLATION_ID
from sandbox.github.state import SandboxState
from sandbox.server import SandboxServer

from agents.github import BudgetBackend, IdentityThrottle, ScaledClock, ThrottleLimits
from agents.github.gateway import GitHubGateway


def compressed_state(window_real_s: float, **limits: int) -> SandboxState:
    """A sandbox where GitHub's hour passes in ``window_real_s`` real seconds."""
    clock = SandboxClock.compressed(3600, window_real_s)
    return SandboxState(clock=clock, limits=RateLimits(**limits))


def sandbox_clock(server: SandboxServer) -> ScaledClock:
    clock = server.state.clock
    return ScaledClock(clock.now, clock.speed)


def reviewer_gateway(
    server: SandboxServer,
    *,
    limits: ThrottleLimits | None = None,
    backend: BudgetBackend | None = None,
    token: str | None = None,
) -> GitHubGateway:
    value = token or server.state.mint_token(REVIEWER_INSTALLATION_ID)
    throttle = IdentityThrottle(
        REVIEWER_BOT, limits=limits, clock=sandbox_clock(server), backend=backend
    )
    return GitHubGateway(server.url, REVIEWER_BOT, lambda: value, throttle)
