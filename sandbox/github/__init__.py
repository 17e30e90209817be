"""An offline stand-in for the parts of GitHub's REST and GraphQL APIs swarm uses."""

from sandbox.github.clock import SandboxClock
from sandbox.github.limits import RateLimits
from sandbox.github.state import Knobs, RecordedRequest, SandboxState

__all__ = ["Knobs", "RateLimits", "RecordedRequest", "SandboxClock", "SandboxState"]
