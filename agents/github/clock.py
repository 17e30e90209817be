"""The throttle's clock: the shared rate-limit engine's (``agents.ratelimit.clock``)."""

from agents.ratelimit.clock import Clock, ScaledClock, SystemClock

__all__ = ["Clock", "ScaledClock", "SystemClock"]
