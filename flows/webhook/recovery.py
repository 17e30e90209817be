"""Deliveries GitHub could not make, found in the App's delivery log and asked for again.

GitHub does not redeliver a failed delivery by itself ("Handling failed webhook deliveries",
docs.github.com/en/webhooks/using-webhooks/handling-failed-webhook-deliveries): what it tried to
send while the receiver was down, restarting or unreachable, or what was not answered within its
10 s, is lost unless someone asks for it. So when the receiver starts, and every
``SWARM_WEBHOOK_RECOVERY_INTERVAL_S`` after, it reads the App's log (``GET /app/hook/deliveries``
with the App's JWT, newest first, cursor paging; "REST API endpoints for GitHub App webhooks")
back to the newest delivery the store holds less a margin for the two clocks, never past the
3 days GitHub keeps the log nor past :data:`MAX_PAGES` pages, and asks GitHub to send again
(``POST /app/hook/deliveries/{id}/attempts``) each delivery that never got an ``OK`` and whose
guid the store never recorded.

The redelivery arrives as any delivery does, through the signature check, under the same guid
(``X-GitHub-Delivery``): the store's first-sight insert of that guid is what makes it run once,
whoever asked and however often. A guid the store holds is never asked for (a redelivery of a
delivery already done stays a duplicate), an asked one is not asked again until the log shows
GitHub's attempt failed too, and after :data:`MAX_ASKS` such attempts it is given up with a
warning. Nothing in the listing is acted on: only its guids and ids choose what to ask for, and
what comes back is judged by its HMAC like everything else (docs/security.md).

A listing or a request GitHub refuses for its rate limit, or answers 5xx, ends the pass with one
logged line; the next pass tries again. Nothing here raises into the receiver.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from agents.redact import redact
from agents.transport.reply import Reply

log = logging.getLogger("flows.webhook")

# GitHub lists an App's deliveries of the past 3 days ("REST API endpoints for GitHub App
# webhooks"); older ones cannot be redelivered.
RETENTION = timedelta(days=3)
# GitHub's clock (``delivered_at``) against the store's (``received_at``), and a delivery in
# flight while the newest row was written.
MARGIN = timedelta(minutes=5)
PER_PAGE = 100
MAX_PAGES = 10
# Redeliveries asked for one guid before it is given up (each failed too).
MAX_ASKS = 3
# An asked-for redelivery the log does not show after this long is asked for again.
ASK_LAPSES = timedelta(minutes=10)
# The first pass waits for the server to listen: a redelivery sent before would fail again.
FIRST_PASS_DELAY_S = 2.0


class HookDeliveries(Protocol):
    """The App's webhook delivery log, with its JWT (the identity layer's minter)."""

    async def hook_deliveries(self, per_page: int, cursor: str | None = None) -> Reply: ...

    async def redeliver_hook(self, delivery_id: int) -> Reply: ...


class SeenDeliveries(Protocol):
    """The store's delivery rows, as far as recovery needs them."""

    def known_delivery_ids(self, delivery_ids: Collection[str]) -> set[str]: ...

    def newest_delivery_at(self) -> datetime | None: ...


@dataclass(frozen=True)
class Attempt:
    """One attempt in GitHub's log (the first one or a redelivery of the guid)."""

    id: int
    guid: str
    delivered_at: datetime
    redelivery: bool
    status: str
    status_code: int
    event: str

    @classmethod
    def parse(cls, item: Any) -> Attempt | None:
        """None for anything not shaped as GitHub's log entries are."""
        if not isinstance(item, dict):
            return None
        try:
            at = datetime.fromisoformat(str(item["delivered_at"]))
            attempt = cls(
                id=int(item["id"]),
                guid=str(item["guid"]),
                delivered_at=at if at.tzinfo else at.replace(tzinfo=UTC),
                redelivery=bool(item.get("redelivery")),
                status=str(item.get("status") or ""),
                status_code=int(item.get("status_code") or 0),
                event=str(item.get("event") or ""),
            )
        except (KeyError, TypeError, ValueError):
            return None
        return attempt if attempt.guid and attempt.id > 0 else None

    @property
    def ok(self) -> bool:
        return self.status == "OK"

    @property
    def worth_asking(self) -> bool:
        """A failure another attempt may cure: no answer at all, 5xx, 408 or 429. A 4xx is the
        receiver's considered refusal (bad signature, too large), the same the next time."""
        code = self.status_code
        return not self.ok and (code == 0 or code >= 500 or code in (408, 429))


@dataclass
class _Ask:
    count: int
    after_id: int  # the guid's newest attempt when asked: GitHub's retry shows as a newer one
    at: datetime


@dataclass
class RecoveryPass:
    """What one pass found and did."""

    listed: int = 0
    asked: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    given_up: list[str] = field(default_factory=list)
    # Why the pass ended before it was through (rate limit, 5xx); None: it was.
    stopped: str | None = None


def _utcnow() -> datetime:
    return datetime.now(UTC)


class DeliveryRecovery:
    """Finds the App's failed deliveries the store never received and asks for each once more."""

    def __init__(
        self,
        api: HookDeliveries,
        store: SeenDeliveries,
        *,
        interval_s: float,
        clock: Callable[[], datetime] = _utcnow,
    ) -> None:
        self.api = api
        self.store = store
        self.interval_s = interval_s
        self.clock = clock
        self.started_at = clock()
        self._since: datetime | None = None
        self._asked: dict[str, _Ask] = {}
        self._given_up: set[str] = set()

    async def run_forever(self) -> None:
        """A pass soon after start, then one every ``interval_s``; never raises (a pass that
        fails is a logged line and the next one tries again)."""
        await asyncio.sleep(FIRST_PASS_DELAY_S)
        while True:
            try:
                await self.recover_once()
            except Exception as exc:
                log.warning(
                    "missed deliveries: this pass failed (%s: %s); the next one, in %.0f s, "
                    "tries again",
                    type(exc).__name__,
                    redact(str(exc)),
                    self.interval_s,
                )
            await asyncio.sleep(self.interval_s)

    async def recover_once(self) -> RecoveryPass:
        done = RecoveryPass()
        now = self.clock()
        since = self._since or await self._first_since(now)
        since = max(since, now - RETENTION)
        listed, done.stopped = await self._list(since)
        done.listed = len(listed)
        if done.stopped is not None and not listed:
            self._report(done)
            return done
        attempts: dict[str, list[Attempt]] = {}
        for attempt in listed:
            attempts.setdefault(attempt.guid, []).append(attempt)
        known = await asyncio.to_thread(self.store.known_delivery_ids, list(attempts))
        held_back: list[datetime] = []
        # Oldest first: the order they happened in.
        for guid, tries in sorted(attempts.items(), key=lambda kv: min(a.id for a in kv[1])):
            if guid in known:
                self._asked.pop(guid, None)
                continue
            outcome = await self._consider(guid, tries, now, done)
            if outcome == "stop":
                break
            if outcome == "wait":
                held_back.append(min(a.delivered_at for a in tries))
        if done.stopped is None:
            newest = max((a.delivered_at for a in listed), default=since + MARGIN)
            self._since = min([newest, *held_back]) - MARGIN
        self._report(done)
        return done

    async def _first_since(self, now: datetime) -> datetime:
        """Back to the newest delivery the store holds; with none, to this receiver's start (an
        empty store is a new installation: what GitHub failed to send before it is not missed)."""
        newest = await asyncio.to_thread(self.store.newest_delivery_at)
        return (newest or self.started_at) - MARGIN

    async def _list(self, since: datetime) -> tuple[list[Attempt], str | None]:
        """The log's attempts made since ``since``, newest first; and why listing stopped early."""
        found: list[Attempt] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            reply = await self.api.hook_deliveries(PER_PAGE, cursor)
            refused = _refusal(reply, "listing the App's webhook deliveries")
            if refused is not None:
                return found, refused
            page = [a for a in map(Attempt.parse, reply.body or []) if a is not None]
            found += [a for a in page if a.delivered_at >= since]
            cursor = _next_cursor(reply)
            if cursor is None or any(a.delivered_at < since for a in page):
                return found, None
        log.warning(
            "missed deliveries: more than %d deliveries since %s; older ones are not checked",
            MAX_PAGES * PER_PAGE,
            since.isoformat(timespec="seconds"),
        )
        return found, None

    async def _consider(
        self, guid: str, tries: list[Attempt], now: datetime, done: RecoveryPass
    ) -> str:
        """Ask for ``guid`` again when it is due; "skip", "wait", "asked" or "stop"."""
        newest = max(tries, key=lambda a: a.id)
        if any(a.ok for a in tries) or not newest.worth_asking or guid in self._given_up:
            return "skip"
        ask = self._asked.get(guid)
        if ask is not None and newest.id <= ask.after_id and now - ask.at < ASK_LAPSES:
            done.waiting.append(guid)  # GitHub has not made the attempt asked for yet
            return "wait"
        if ask is not None and ask.count >= MAX_ASKS:
            self._given_up.add(guid)
            done.given_up.append(guid)
            log.warning(
                "missed delivery %s (%s): %d redeliveries failed too (last: %s); given up: "
                "is the webhook URL reachable from GitHub?",
                guid,
                newest.event,
                ask.count,
                newest.status,
            )
            return "skip"
        reply = await self.api.redeliver_hook(newest.id)
        refused = _refusal(reply, f"asking for delivery {guid} again")
        if refused is not None and (reply.status >= 500 or _rate_limited(reply)):
            done.stopped = refused
            return "stop"
        self._asked[guid] = _Ask((ask.count if ask else 0) + 1, newest.id, now)
        if refused is not None:
            log.warning("missed delivery %s: %s", guid, refused)
            return "wait"
        done.asked.append(guid)
        return "wait"

    def _report(self, done: RecoveryPass) -> None:
        if done.stopped is not None:
            log.warning(
                "missed deliveries: %s; the next pass, in %.0f s, tries again",
                done.stopped,
                self.interval_s,
            )
        if done.asked:
            log.info(
                "missed deliveries: %d failed delivery(ies) the store never received asked for "
                "again: %s",
                len(done.asked),
                ", ".join(done.asked),
            )


def _rate_limited(reply: Reply) -> bool:
    if reply.status == 429:
        return True
    return reply.status == 403 and (
        reply.headers.get("x-ratelimit-remaining") == "0" or "retry-after" in reply.headers
    )


def _refusal(reply: Reply, doing: str) -> str | None:
    """One line saying why GitHub did not do it, or None when it did (2xx)."""
    if reply.ok:
        return None
    if _rate_limited(reply):
        return f"GitHub's rate limit for the App stopped {doing} ({reply.github_message()})"
    return f"GitHub answered {reply.github_message()} {doing}"


def _next_cursor(reply: Reply) -> str | None:
    """The ``cursor`` of the ``Link`` header's ``rel="next"`` page, if there is one."""
    from urllib.parse import parse_qs, urlsplit

    for part in reply.headers.get("link", "").split(","):
        url, _, rel = part.partition(";")
        if 'rel="next"' in rel:
            cursor = parse_qs(urlsplit(url.strip().strip("<>")).query).get("cursor")
            return cursor[0] if cursor else None
    return None
