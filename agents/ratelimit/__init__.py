"""The rate-limit engine both provider layers build on: clocks and shared-state backends.

The GitHub throttle (per identity) and the LLM throttle (per API key) each keep their own state
and decisions; what they share is here: an injectable clock, the pause they report, how a pump
waits, and backends that run one step on a named state atomically, in memory or in the store for
several processes. Neither layer imports the other; both import this.

- ``anthropic/``: The model API key's rate-limit policy: its meters, its limits, what answers say
- ``backend.py``: Where budget state lives: one process (in memory) or a shared database (the store)
- ``clock.py``: Time for the throttles: an injectable clock so tests and the sandbox can compress an
  hour
- ``github/``: GitHub's rate-limit policy: what a request costs, an identity's buckets, what answers
  say
- ``pause.py``: A pause either throttle reports: who may not call until when, and why
- ``waiting.py``: What both throttles do the same way: reach their state, and run the one pump that
  grants waiting requests in turn
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
