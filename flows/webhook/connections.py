"""What a sender may hold of the receiver before its request is in: time, and connections.

uvicorn's h11 protocol times one thing only: a kept-alive connection with nothing sent since its
last answer (``timeout_keep_alive``, whole seconds, stopped by the first byte that comes). A
connection that opens and sends nothing, a request head sent a byte at a time, a body that never
ends, the first byte of a next request and no more: each is held for ever on a file descriptor,
and anyone can do it, the webhook secret is checked only once the body is in. With the process's
file limit reached, nothing more is accepted (``/healthz`` included) and the receiver's own store
and GitHub connections fail. uvicorn's ``limit_concurrency`` does not help: it answers 503 only
once a request head is in, and accepts every socket before that. ``h11_max_incomplete_event_size``
already bounds the head's size (h11's 16 KiB), and the app bounds the body's
(``SWARM_WEBHOOK_MAX_BODY_BYTES``): what was missing is time and count, added here.

:class:`GuardedH11Protocol` gives each connection one deadline for the phase it is in:

- **head**: from the connection opening (or the first byte of a next request on a kept-alive
  connection), the request head must be in within ``SWARM_WEBHOOK_HEADER_TIMEOUT_S``;
- **body**: from the head, the body must be in within ``SWARM_WEBHOOK_BODY_TIMEOUT_S``;
- **app**: the request is in and the app answers it: no deadline (the app's own work);
- **idle**: answered and kept alive, closed after ``SWARM_WEBHOOK_IDLE_TIMEOUT_S`` (in place of
  uvicorn's keep-alive timer, so that a fraction of a second can be set).

A deadline is for the whole phase, not for a pause: a sender dribbling a byte a second is cut off
as surely as one that stops. At ``SWARM_WEBHOOK_MAX_CONNECTIONS`` open connections a new one
closes the stalest connection that holds no request in the app's hands (an idle one first, then
the oldest still sending its head, then its body), as nginx drops idle keep-alive connections when
it runs short: stalling senders then cannot crowd out a probe or a delivery that sends its request
at once. Only when every connection has its request with the app is the new one refused (closed
unanswered; GitHub logs the delivery as failed, and ``SWARM_WEBHOOK_RECOVERY_INTERVAL_S`` asks
for it again). :func:`make_room` makes sure that many connections fit under the file limit.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import resource
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from agents.settings.model import ConfigError

if TYPE_CHECKING:
    from uvicorn.config import Config
    from uvicorn.server import ServerState

    from agents.settings.model import Settings

log = logging.getLogger("flows.webhook")

# The listen backlog, which asyncio also takes as how many sockets to accept in one turn of the
# event loop, before any of them reaches ``connection_made`` and the cap: up to two such turns
# of sockets are open beyond the cap at once. uvicorn's 2048 would take the last file in one
# turn under a flood (seen: "Too many open files", and nothing accepted for a second).
ACCEPT_BATCH = 64

# Descriptors the receiver keeps for itself beside the capped connections: two accept batches
# not yet counted, the store's pool, the GitHub, Prefect and model clients' connections,
# in-process runs' files, logs, the listening socket. A receiver idles at about 30.
DESCRIPTOR_RESERVE = 256

Phase = Literal["head", "body", "app", "idle"]

# Which connection goes first when the cap is reached: idle ones (answered already), then those
# still sending a head, then a body; never one whose request the app holds.
_EVICTION_ORDER: dict[Phase, int] = {"idle": 0, "head": 1, "body": 2}

# The order connections entered their phase in, for "stalest": a count, not the clock, whose
# readings tie for connections accepted in one turn of the event loop.
_ENTERED = itertools.count()

_WHY: dict[Phase, str] = {
    "head": "request head not in within {:g} s",
    "body": "request body not in within {:g} s",
    "idle": "idle for {:g} s",
}


@dataclass(frozen=True)
class ReadLimits:
    """How long each phase of a request may take, and how many connections may be open."""

    header_timeout_s: float = 5.0
    body_timeout_s: float = 10.0
    idle_timeout_s: float = 5.0
    max_connections: int = 128

    @classmethod
    def from_settings(cls, settings: Settings) -> ReadLimits:
        return cls(
            header_timeout_s=settings.webhook_header_timeout_s,
            body_timeout_s=settings.webhook_body_timeout_s,
            idle_timeout_s=settings.webhook_idle_timeout_s,
            max_connections=settings.webhook_max_connections,
        )

    def timeout(self, phase: Phase) -> float | None:
        return {
            "head": self.header_timeout_s,
            "body": self.body_timeout_s,
            "idle": self.idle_timeout_s,
            "app": None,
        }[phase]


def make_room(limits: ReadLimits) -> None:
    """Raise this process's soft limit on open files so the connection cap and the reserve fit;
    a :class:`ConfigError` when even the hard limit is too low (the cap would be a lie: the
    file limit, not the cap, would decide when connections are refused)."""
    need = limits.max_connections + DESCRIPTOR_RESERVE
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= need:
        return
    if hard != resource.RLIM_INFINITY and hard < need:
        raise ConfigError(
            f"SWARM_WEBHOOK_MAX_CONNECTIONS: {limits.max_connections} connections and the "
            f"{DESCRIPTOR_RESERVE} files the receiver keeps for itself need {need} open files, "
            f"and this process may open at most {hard} (ulimit -Hn): lower the setting or "
            "raise the limit"
        )
    resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline per phase and a cap on open connections."""

    limits: ClassVar[ReadLimits] = ReadLimits()

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self._phase: Phase = "head"
        self._entered = 0
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._enter("head")
        self._keep_to_cap()

    def data_received(self, data: bytes) -> None:
        if self._phase == "idle" and data:
            self._enter("head")  # a next request begins: its head has its own deadline
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.transport.is_closing():
            return
        # uvicorn armed its keep-alive timer: the idle deadline stands in for it.
        self._unset_keepalive_if_required()
        self._follow()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _follow(self) -> None:
        """Move to the phase h11 says the request is in (a call may cover several)."""
        state = self.conn.their_state
        if state is h11.SEND_BODY:
            if self._phase != "body":
                self._enter("body")
        elif state in (h11.DONE, h11.MUST_CLOSE):
            if self._phase != "app":
                self._enter("app")
        elif state is h11.IDLE and self._phase == "app":
            # Answered; bytes of a next request already read wait as h11's trailing data.
            self._enter("head" if self.conn.trailing_data[0] else "idle")

    def _enter(self, phase: Phase) -> None:
        self._disarm()
        self._phase, self._entered = phase, next(_ENTERED)
        seconds = self.limits.timeout(phase)
        if seconds is not None:
            self._deadline = self.loop.call_later(seconds, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        seconds = self.limits.timeout(self._phase) or 0.0
        self._cut(_WHY.get(self._phase, "").format(seconds))

    def _cut(self, why: str) -> None:
        """Close at once, unanswered: what is unsent is not owed to a sender that stalls, and
        a plain close would keep the descriptor until a sender that reads nothing took it."""
        if self.transport.is_closing():
            return
        prefix = "{}:{} ".format(*self.client) if self.client else ""
        log.info("%sclosed: %s", prefix, why)
        self.transport.abort()

    def _keep_to_cap(self) -> None:
        open_ = [
            c
            for c in self.connections
            if isinstance(c, GuardedH11Protocol) and not c.transport.is_closing()
        ]
        if len(open_) <= self.limits.max_connections:
            return
        stalest = [c for c in open_ if c is not self and c._phase != "app"]
        cap = f"{self.limits.max_connections} connections open, the most allowed"
        if not stalest:
            self._cut(f"{cap}, each with a request being answered")
            return
        victim = min(stalest, key=lambda c: (_EVICTION_ORDER[c._phase], c._entered))
        phase = "idle" if victim._phase == "idle" else f"still sending its {victim._phase}"
        victim._cut(f"{cap}: the stalest ({phase}) makes room for a new one")


def guarded_protocol(limits: ReadLimits) -> type[GuardedH11Protocol]:
    """The protocol class uvicorn builds each connection with, holding ``limits``."""

    class Guarded(GuardedH11Protocol):
        pass

    Guarded.limits = limits
    return Guarded
