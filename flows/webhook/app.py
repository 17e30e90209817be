"""The webhook receiver: ``POST /github/webhook`` and ``GET /healthz``, as a Starlette app.

Before any of this, the connection has its head and body in within their deadlines, or is
closed (:mod:`flows.webhook.connections`). Order matters, and each step refuses before the next
costs anything: the body is read up to
the size cap (413 beyond it, before any hashing), the ``X-Hub-Signature-256`` is checked over
the raw bytes (401 with an empty body when missing or wrong, nothing recorded), a signed body
that is no GitHub payload (not JSON, nested too deep, numbers past 64 bits) gets 400 with an
empty body and nothing recorded, the delivery is
recorded in the store with its work (a delivery id or body seen before answers 200 and starts
nothing, unless it is GitHub's redelivery of work that never finished, which runs it), and only
then is the work handed on, after the answer is sent: GitHub gives a receiver 10 s, and a
review takes longer, so the receiver never reviews inline. With a :class:`DeliveryQueue` the
row is the work's queue entry: a receiver that starts takes over what a dead one accepted.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Protocol

import anyio.to_thread
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agents.events.routing import EventWork, Routed, route_event
from agents.events.signature import signature_ok
from agents.kinds.book import RoleBook
from agents.redact import redact
from agents.store.records import DeliveryEnd, DeliveryRecord, NewDelivery
from flows.webhook.queue import DeliveryQueue, DeliveryRows

log = logging.getLogger("flows.webhook")

_DELIVERY = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
# GitHub's event names are lowercase words joined by underscores, some with digits
# (``projects_v2_item``): any of them is a valid delivery, acted on or ignored with 200.
_EVENT = re.compile(r"^[a-z0-9_]{1,64}$")


# What the sink answers is what the store keeps as the delivery's end.
Submitted = DeliveryEnd


class Recovery(Protocol):
    """Asks GitHub again for the deliveries it failed to make (:mod:`flows.webhook.recovery`)."""

    async def run_forever(self) -> None: ...


class WorkSink(Protocol):
    async def submit(self, work: EventWork, delivery_id: str) -> Submitted: ...


class DeliveryLog(DeliveryRows, Protocol):
    """The store's delivery records, as far as the receiver needs them."""

    def record_delivery(self, delivery: NewDelivery) -> bool: ...

    def describe_delivery(self, delivery_id: str, detail: str) -> bool: ...


@dataclass
class WebhookReceiver:
    secret: str
    deliveries: DeliveryLog
    sink: WorkSink
    max_body_bytes: int
    # Repositories this swarm serves (case-insensitive); empty: any the signed event names.
    repos: Collection[str] = ()
    # Installations of our App(s); an event for another installation is ignored.
    installations: Collection[int] = ()
    # Whether the bot reviewed (repo, number): feedback on other PRs is ignored before any
    # GitHub call (a store read; None: every PR's feedback is taken).
    reviewed: Callable[[str, int], bool] | None = None
    # The store as the queue: accepted work is claimed on its row, resumed after a crash, and
    # redelivered work that never finished runs (None: rows record, nothing resumes).
    queue: DeliveryQueue | None = None
    # Deliveries GitHub failed to make while this receiver was down, asked for again (None: not).
    recovery: Recovery | None = None
    # Which role takes which work (None: the roles shipped with swarm).
    roles: RoleBook | None = None

    def __post_init__(self) -> None:
        self._repos = {r.lower() for r in self.repos}
        self._background: set[asyncio.Task[None]] = set()
        self._resumer: asyncio.Task[None] | None = None
        self._recovering: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Take over what dead receivers left (at once, then every third of the lease) and keep
        this receiver's claims renewed; both run until :meth:`stop`. Missed deliveries are asked
        for again from the start on, until :meth:`stop_resuming`."""
        if self.recovery is not None and self._recovering is None:
            self._recovering = asyncio.create_task(self.recovery.run_forever())
        if self.queue is None or self._background:
            return
        self._resumer = asyncio.create_task(self._resume_forever(self.queue))
        self._background = {self._resumer, asyncio.create_task(self.queue.renew_forever())}

    async def stop_resuming(self) -> None:
        """Take over nothing more (stopping: the runs in hand are drained, claims renewed)."""
        await _cancel({self._resumer} if self._resumer else set())
        await _cancel({self._recovering} if self._recovering else set())

    async def stop(self) -> None:
        """Stop taking over and renewing; claims left lapse, and the next receiver resumes."""
        await _cancel(self._background)
        self._background = set()
        await _cancel({self._recovering} if self._recovering else set())

    async def _resume_forever(self, queue: DeliveryQueue) -> None:
        every = queue.lease.total_seconds() / 3
        while True:
            try:
                rows = await queue.take_over()
            except Exception as exc:  # the store is down a moment: the next round tries
                log.warning("deliveries not taken over: %s", redact(str(exc)))
                rows = []
            # One after another, oldest first: the order they were accepted in.
            for row in rows:
                await self._resume(row)
            await asyncio.sleep(every)

    async def _resume(self, row: DeliveryRecord) -> None:
        try:
            work = EventWork.model_validate(row.work)
        except ValueError as exc:
            why = f"its work cannot be read: {type(exc).__name__}"
            await anyio.to_thread.run_sync(
                lambda: self.deliveries.finish_delivery(row.delivery_id, DeliveryEnd("failed", why))
            )
            return
        log.info("delivery %s: %s resumed", row.delivery_id, work.target)
        await self._submit(work, row.delivery_id)

    async def handle(self, request: Request) -> Response:
        try:
            body = await _read_capped(request, self.max_body_bytes)
        except ClientDisconnect:
            # Gone before its body was in (cut off at the body timeout, or it hung up): there is
            # nobody to answer and nothing to record, and it is no error of the receiver's.
            log.info("a sender went away before its body was in: nothing recorded")
            return Response(status_code=400)
        if body is None:
            return Response(status_code=413)
        if not signature_ok(self.secret, body, request.headers.get("x-hub-signature-256")):
            return Response(status_code=401)
        event = request.headers.get("x-github-event", "")
        delivery = request.headers.get("x-github-delivery", "")
        if not _EVENT.match(event) or not _DELIVERY.match(delivery):
            return JSONResponse({"message": "X-GitHub-Event or X-GitHub-Delivery missing"}, 400)
        # Parsing the payload and reading its commands is work in proportion to what the sender
        # wrote: off the event loop, so one delivery never holds up another's answer (GitHub
        # gives each 10 seconds and does not send it again).
        routed = await anyio.to_thread.run_sync(route_event, event, body, self.roles)
        if routed.malformed:
            # Signed, yet no payload GitHub sends: a bad request, answered without detail.
            return Response(status_code=400)
        routed = self._served(routed)
        if routed.work is not None and routed.work.kind in ("learn", "respond"):
            routed = await anyio.to_thread.run_sync(self._learnable, routed)
        first = await anyio.to_thread.run_sync(self._record, delivery, body, routed)
        if not first:
            again = await self._redelivered(delivery, body)
            if again is None:
                log.info("delivery %s seen before: nothing started", delivery)
                return JSONResponse({"status": "duplicate"})
            log.info("delivery %s redelivered, its work never finished: run again", delivery)
            task = BackgroundTask(self._submit, again, delivery)
            return JSONResponse({"status": "accepted"}, status_code=202, background=task)
        if routed.work is None:
            log.debug("delivery %s ignored: %s", delivery, routed.reason)
            return JSONResponse({"status": "ignored", "reason": routed.reason})
        log.info("delivery %s: %s", delivery, routed.reason)
        task = BackgroundTask(self._submit, routed.work, delivery)
        return JSONResponse({"status": "accepted"}, status_code=202, background=task)

    def _served(self, routed: Routed) -> Routed:
        work = routed.work
        if work is None:
            return routed
        why = None
        if self._repos and work.repo.lower() not in self._repos:
            why = f"{work.repo} is not a repository this swarm serves"
        elif self.installations and work.installation_id not in self.installations:
            why = f"installation {work.installation_id} is not this App's"
        return routed if why is None else _ignored(routed, why)

    def _learnable(self, routed: Routed) -> Routed:
        work = routed.work
        if work is None or self.reviewed is None or self.reviewed(work.repo, work.number):
            return routed
        return _ignored(routed, f"{routed.reason}: the bot has not reviewed {work.target}")

    def _record(self, delivery: str, body: bytes, routed: Routed) -> bool:
        work, holder, until = None, None, None
        if routed.work is not None:
            work = routed.work.model_dump(mode="json")
            if self.queue is not None:
                holder, until = self.queue.claim()
        return self.deliveries.record_delivery(
            NewDelivery(
                delivery_id=delivery,
                body_sha256=hashlib.sha256(body).hexdigest(),
                event=routed.event,
                action=routed.action,
                repo=routed.repo,
                number=routed.number,
                sender=routed.sender,
                outcome="received" if routed.work else "ignored",
                detail=routed.reason,
                work=work,
                claimed_by=holder,
                claimed_until=until,
            )
        )

    async def _redelivered(self, delivery: str, body: bytes) -> EventWork | None:
        """The work of a delivery seen before whose work never finished and that nobody holds
        (GitHub's Redeliver after a crash), now this receiver's; None: a duplicate."""
        if self.queue is None:
            return None
        row = await self.queue.redelivered(delivery, hashlib.sha256(body).hexdigest())
        if row is None:
            return None
        try:
            return EventWork.model_validate(row.work)
        except ValueError:
            return None

    async def _submit(self, work: EventWork, delivery: str) -> None:
        try:
            done = await self.sink.submit(work, delivery)
        except Exception as exc:
            # The answer is already sent: the store and the log are where this shows.
            detail = f"{type(exc).__name__}: {redact(str(exc))}"
            log.warning("delivery %s (%s) failed: %s", delivery, work.target, detail)
            done = Submitted("failed", detail)
        await anyio.to_thread.run_sync(self._finish, delivery, done)

    def _finish(self, delivery: str, done: Submitted) -> None:
        # Only over "received": queued work may have moved on and said so already.
        moved = not self.deliveries.finish_delivery(delivery, done, only_from=("received",))
        if moved and done.outcome == "enqueued" and done.detail:
            self.deliveries.describe_delivery(delivery, done.detail)


async def _cancel(tasks: Collection[asyncio.Task[None]]) -> None:
    for task in tasks:
        task.cancel()
    for task in tasks:
        with suppress(asyncio.CancelledError):
            await task


def _ignored(routed: Routed, why: str) -> Routed:
    return Routed(routed.event, routed.action, routed.repo, routed.number, routed.sender, None, why)


async def _read_capped(request: Request, limit: int) -> bytes | None:
    """The body, or None as soon as it is known to exceed ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


def create_webhook_app(
    receiver: WebhookReceiver, *, on_shutdown: Callable[[], Awaitable[None]] | None = None
) -> Starlette:
    """The ASGI app; ``on_shutdown`` runs when the server stops (waits for work in hand)."""

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await receiver.start()
        try:
            yield
        finally:
            # Nothing more is taken over; the runs in hand drain with their claims renewed.
            await receiver.stop_resuming()
            if on_shutdown is not None:
                await on_shutdown()
            await receiver.stop()

    routes = [
        Route("/github/webhook", receiver.handle, methods=["POST"]),
        Route("/healthz", health, methods=["GET"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan)
