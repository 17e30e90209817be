"""Gateways pointed at a running sandbox GitHub, on the sandbox's (compressed) clock."""

from __future__ import annotations

from agents.github import IdentityThrottle, ScaledClock, ThrottleLimits
from agents.github.gateway import GitHubGateway
from agents.ratelimit.clock import Clock
from sandbox.github.clock import SandboxClock
from sandbox.github.limits import RateLimits
from sandbox.github.seed import REVIEWER_BOT, REVIEWER_INSTALLATION_ID
from sandbox.github.state import SandboxState
from sandbox.server import SandboxServer
from tests.stepped_clock import SteppedClock


def compressed_state(window_real_s: float, **limits: int) -> SandboxState:
    """A sandbox where GitHub's hour passes in ``window_real_s`` real seconds."""
    clock = SandboxClock.compressed(3600, window_real_s)
    return SandboxState(clock=clock, limits=RateLimits(**limits))


def stepped_state(**limits: int) -> tuple[SandboxState, SteppedClock]:
    """A sandbox on virtual time: it moves only when everything waits (see ``SteppedClock``)."""
    sandbox = SandboxClock(speed=0)
    return SandboxState(clock=sandbox, limits=RateLimits(**limits)), SteppedClock(sandbox)


def in_flight(gateway: GitHubGateway) -> bool:
    """Whether any request of the gateway's identity holds a reservation (sent, not answered)."""
    throttle = gateway.throttle
    return throttle.backend.transact(throttle.identity, lambda s: bool(s.inflight))


def sandbox_clock(server: SandboxServer) -> ScaledClock:
    clock = server.state.clock
    return ScaledClock(clock.now, clock.speed)


def reviewer_gateway(
    server: SandboxServer,
    *,
    limits: ThrottleLimits | None = None,
    token: str | None = None,
    clock: Clock | None = None,
) -> GitHubGateway:
    throttle = IdentityThrottle(REVIEWER_BOT, limits=limits, clock=clock or sandbox_clock(server))
    provider = (lambda: token) if token else ReMintingToken(server.state)
    return GitHubGateway(server.url, REVIEWER_BOT, provider, throttle)


class ReMintingToken:
    """Installation tokens live an hour (of sandbox time); mint a new one before that."""

    def __init__(self, state: SandboxState, lifetime_s: float = 1800.0) -> None:
        self._state = state
        self._lifetime = lifetime_s
        self._value = ""
        self._minted_at = float("-inf")

    def __call__(self) -> str:
        now = self._state.clock.now()
        if now - self._minted_at > self._lifetime:
            self._value = self._state.mint_token(REVIEWER_INSTALLATION_ID)
            self._minted_at = now
        return self._value
