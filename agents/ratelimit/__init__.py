"""The rate-limit engine both provider layers build on: clocks and shared-state backends.

The GitHub throttle (per identity) and the LLM throttle (per API key) each keep their own state
and decisions; what they share is here: an injectable clock, the pause they report, how a pump
waits, and backends that run one step on a named state atomically, in memory or in the store for
several processes. Neither layer imports the other; both import this.
"""

from agents.ratelimit.backend import (
    InMemoryBackend,
    RowBackend,
    SharedState,
    StateBackend,
    StateRows,
)
from agents.ratelimit.clock import Clock, ScaledClock, SystemClock
from agents.ratelimit.pause import Paused
from agents.ratelimit.waiting import Pump, transact

__all__ = [
    "Clock",
    "InMemoryBackend",
    "Paused",
    "Pump",
    "RowBackend",
    "ScaledClock",
    "SharedState",
    "StateBackend",
    "StateRows",
    "SystemClock",
    "transact",
]
