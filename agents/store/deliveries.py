"""Webhook deliveries: the first sight of an ``X-GitHub-Delivery`` id wins, atomically.

An accepted delivery's row is also the receiver's queue: it keeps the delivery's work (plain
data), the receiver that is doing it (``claimed_by``, held until ``claimed_until`` and renewed
while that receiver lives) and how often one took it (``attempts``). A row whose work has not
finished and whose claim lapsed, or whose holder is known to be dead, is taken over by exactly
one receiver: the taking is a compare-and-set on (outcome, holder, attempts), which of two
receivers on one store only one can win, on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from datetime import datetime

import sqlalchemy as sa

from agents.store.base import StoreBase, check_id, clean, clean_json, utcnow
from agents.store.records import DeliveryEnd, DeliveryRecord, NewDelivery
from agents.store.schema import webhook_deliveries

DELIVERY_OUTCOMES = (
    "received",
    "enqueued",
    "running",
    "ignored",
    "refused",
    "failed",
    "done",
)
# A delivery whose work is still to do or under way: resumable when nobody holds it.
UNFINISHED = ("received", "enqueued", "running")

_d = webhook_deliveries.c


class DeliveriesMixin(StoreBase):
    def record_delivery(self, delivery: NewDelivery) -> bool:
        """Record a delivery the first time its id, and its body, are seen; False when either
        was seen before (a redelivery, or a replay under another id). Its ``work`` is what it
        asks for, claimed at once by ``claimed_by`` until ``claimed_until``."""
        work = delivery.work
        try:
            with self._db.write() as conn:
                conn.execute(
                    sa.insert(webhook_deliveries).values(
                        delivery_id=check_id(delivery.delivery_id, "delivery id"),
                        body_sha256=delivery.body_sha256,
                        event=clean(delivery.event),
                        action=clean(delivery.action),
                        repo=clean(delivery.repo),
                        number=delivery.number,
                        sender=clean(delivery.sender),
                        outcome=delivery.outcome,
                        detail=clean(delivery.detail),
                        received_at=utcnow(),
                        work=None if work is None else clean_json(dict(work)),
                        claimed_by=delivery.claimed_by,
                        claimed_until=delivery.claimed_until,
                        attempts=1 if delivery.claimed_by else 0,
                    )
                )
        except sa.exc.IntegrityError:
            return False
        return True

    def finish_delivery(
        self, delivery_id: str, end: DeliveryEnd, *, only_from: Collection[str] | None = None
    ) -> bool:
        """Record what became of a delivery; with ``only_from``, only while its outcome is one of
        those (two writers in either order: the later news is never overwritten by the older).
        A finished outcome, or ``end.handed_over`` (the work is in other hands, a deployment's
        flow run), gives the claim up. Returns whether the row changed."""
        values: dict[str, object] = {"outcome": end.outcome}
        if end.detail is not None:  # None: what the row said of the work stands
            values["detail"] = clean(end.detail)
        done = end.outcome not in UNFINISHED
        if end.flow_run_id is not None or done:
            values["flow_run_id"] = clean(end.flow_run_id)
        if end.flow_state is not None:
            values["flow_state"] = clean(end.flow_state)
        if done:
            values["finished_at"] = utcnow()
        if end.handed_over or done:
            values["claimed_until"] = None
        where = _d.delivery_id == delivery_id
        if only_from is not None:
            where = where & _d.outcome.in_(list(only_from))
        return bool(self._update(webhook_deliveries, where, values))

    def describe_delivery(self, delivery_id: str, detail: str) -> bool:
        """Say what a delivery's work is when its run already moved the row on (the run may
        start before the receiver's word lands); a failure's reason is never overwritten."""
        where = (_d.delivery_id == delivery_id) & _d.outcome.in_(("enqueued", "running", "done"))
        return bool(self._update(webhook_deliveries, where, {"detail": clean(detail)}))

    def renew_delivery_claims(self, claimed_by: str, until: datetime) -> int:
        """Extend every claim ``claimed_by`` holds on unfinished work; how many there were."""
        where = (
            (_d.claimed_by == claimed_by)
            & _d.outcome.in_(UNFINISHED)
            & _d.claimed_until.is_not(None)
        )
        return self._update(webhook_deliveries, where, {"claimed_until": until})

    def take_over_delivery(
        self,
        delivery_id: str,
        claimed_by: str,
        until: datetime,
        *,
        dead: Callable[[str], bool] = lambda holder: False,
        body_sha256: str | None = None,
    ) -> DeliveryRecord | None:
        """Claim one delivery whose work has not finished and whose holder's claim lapsed (or
        whose holder is ``dead``); the row as taken, or None when it is finished, held, handed
        over, or (with ``body_sha256``) another body's."""
        row = self.get_delivery(delivery_id)
        if row is None or (body_sha256 is not None and row.body_sha256 != body_sha256):
            return None
        return self._take(row, claimed_by, until, dead, utcnow())

    def take_over_deliveries(
        self,
        claimed_by: str,
        until: datetime,
        *,
        dead: Callable[[str], bool] = lambda holder: False,
        limit: int = 500,
    ) -> list[DeliveryRecord]:
        """Claim every delivery left unfinished by a receiver that is gone (its claim lapsed, or
        ``dead`` says so), oldest first: the work that receiver accepted and never finished."""
        query = (
            sa.select(webhook_deliveries)
            .where(
                _d.outcome.in_(UNFINISHED),
                _d.work.is_not(None),
                _d.claimed_until.is_not(None),
                _d.claimed_by != claimed_by,
            )
            .order_by(_d.received_at, _d.delivery_id)
            .limit(limit)
        )
        now = utcnow()
        taken = [
            self._take(row, claimed_by, until, dead, now)
            for row in self._all(DeliveryRecord, query)
        ]
        return [row for row in taken if row is not None]

    def _take(
        self,
        row: DeliveryRecord,
        claimed_by: str,
        until: datetime,
        dead: Callable[[str], bool],
        now: datetime,
    ) -> DeliveryRecord | None:
        if row.outcome not in UNFINISHED or row.work is None or row.claimed_until is None:
            return None
        holder = row.claimed_by or ""
        if row.claimed_until >= now and not (holder and holder != claimed_by and dead(holder)):
            return None
        same = (
            (_d.delivery_id == row.delivery_id)
            & (_d.outcome == row.outcome)
            & (_d.attempts == row.attempts)
            & (_d.claimed_by == holder if row.claimed_by is not None else _d.claimed_by.is_(None))
        )
        values = {"claimed_by": claimed_by, "claimed_until": until, "attempts": row.attempts + 1}
        if not self._update(webhook_deliveries, same, values):
            return None  # another receiver took it a moment ago
        return self.get_delivery(row.delivery_id)

    def get_delivery(self, delivery_id: str) -> DeliveryRecord | None:
        return self._first(
            DeliveryRecord,
            sa.select(webhook_deliveries).where(_d.delivery_id == delivery_id),
        )

    def known_delivery_ids(self, delivery_ids: Collection[str]) -> set[str]:
        """Which of ``delivery_ids`` the store holds (recorded once, whatever became of them)."""
        wanted = sorted(set(delivery_ids))
        found: set[str] = set()
        for start in range(0, len(wanted), 500):
            query = sa.select(_d.delivery_id).where(_d.delivery_id.in_(wanted[start : start + 500]))
            with self._db.read() as conn:
                found.update(str(row[0]) for row in conn.execute(query))
        return found

    def newest_delivery_at(self) -> datetime | None:
        """When the newest delivery the store holds was received (None: none yet)."""
        query = sa.select(_d.received_at).order_by(_d.received_at.desc()).limit(1)
        with self._db.read() as conn:
            newest: datetime | None = conn.execute(query).scalar()
        return newest

    def list_deliveries(self, limit: int = 50) -> list[DeliveryRecord]:
        """The latest deliveries, those whose work has not finished first (lost or under way),
        then the rest, newest first."""
        unfinished = sa.case((_d.outcome.in_(UNFINISHED), 0), else_=1)
        return self._all(
            DeliveryRecord,
            sa.select(webhook_deliveries)
            .order_by(unfinished, _d.received_at.desc(), _d.delivery_id)
            .limit(limit),
        )
