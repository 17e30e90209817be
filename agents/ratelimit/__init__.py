"""The rate-limit engine, with GitHub's policy and the model API key's beneath it.

One engine (:class:`~agents.ratelimit.throttle.Throttle`) grants permits in turn over a budget,
waits, reports pauses too long to sleep through, and keeps the budget's state in a backend (this
process, or the store's rows for several processes). A provider's policy
(:class:`~agents.ratelimit.policy.Policy`) says what a request costs, when it may go and what an
answer changes: GitHub's per identity (``github/``), the model key's per key and model
(``anthropic/``). Neither policy imports the other, and this package imports no layer: each
provider layer says the engine's pauses in its own words.

- ``anthropic/``: The model API key's rate-limit policy: its meters, its limits, what answers say
- ``backend.py``: Where budget state lives: one process (in memory) or a shared database (the store)
- ``clock.py``: Time for the throttles: an injectable clock so tests and the sandbox can compress an
  hour
- ``decision.py``: What a policy decides about one waiting request: it may go now, or when to look
  again
- ``github/``: GitHub's rate-limit policy: what a request costs, an identity's buckets, what answers
  say
- ``pause.py``: A pause either policy reports (who may not call until when, and why), and the one
  backoff for pauses the provider gave no time for
- ``per_key.py``: One value per key, made on first use and the same one after, for every thread
  of a process
- ``permit.py``: Leave to send one request, held until its answer is settled with the throttle
- ``policy.py``: What a provider's rate-limit policy tells the engine
- ``throttle.py``: The rate-limit engine: one budget's throttle, granting permits in turn as its
  policy allows
- ``turns.py``: Whose turn it is: waiting requests queue per lane and, within a lane, per worker
- ``waiting.py``: How the engine waits: reach the budget state, and run the one pump that grants
  waiting requests in turn
"""

from agents.ratelimit.backend import (
    InMemoryBackend,
    RowBackend,
    SharedState,
    StateBackend,
    StateRows,
)
from agents.ratelimit.clock import Clock, ScaledClock, SystemClock
from agents.ratelimit.decision import GRANTED, Decision
from agents.ratelimit.pause import ImpossibleRequest, Pause, Paused, backoff
from agents.ratelimit.permit import Permit
from agents.ratelimit.policy import Policy
from agents.ratelimit.throttle import Throttle
from agents.ratelimit.waiting import Pump, transact

__all__ = [
    "GRANTED",
    "Clock",
    "Decision",
    "ImpossibleRequest",
    "InMemoryBackend",
    "Pause",
    "Paused",
    "Permit",
    "Policy",
    "Pump",
    "RowBackend",
    "ScaledClock",
    "SharedState",
    "StateBackend",
    "StateRows",
    "SystemClock",
    "Throttle",
    "backoff",
    "transact",
]
