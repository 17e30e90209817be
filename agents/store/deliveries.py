"""Webhook deliveries: the first sight of an ``X-GitHub-Delivery`` id wins, atomically."""

from __future__ import annotations

from collections.abc import Collection

import sqlalchemy as sa

from agents.store.base import StoreBase, check_id, clean, utcnow
from agents.store.records import DeliveryEnd, DeliveryRecord, NewDelivery
from agents.store.schema import webhook_deliveries

DELIVERY_OUTCOMES = ("received", "enqueued", "ignored", "refused", "failed", "done")


class DeliveriesMixin(StoreBase):
    def record_delivery(self, delivery: NewDelivery) -> bool:
        """Record a delivery the first time its id, and its body, are seen; False when either
        was seen before (a redelivery, or a replay under another id)."""
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
                    )
                )
        except sa.exc.IntegrityError:
            return False
        return True

    def finish_delivery(
        self, delivery_id: str, end: DeliveryEnd, *, only_from: Collection[str] | None = None
    ) -> None:
        """Record what became of a delivery; with ``only_from``, only while its outcome is one of
        those (two writers in either order: the later news is never overwritten by the older)."""
        values = {
            "outcome": end.outcome,
            "detail": clean(end.detail),
            "flow_run_id": clean(end.flow_run_id),
            "finished_at": utcnow(),
        }
        where = webhook_deliveries.c.delivery_id == delivery_id
        if only_from is not None:
            where = where & webhook_deliveries.c.outcome.in_(list(only_from))
        self._update(webhook_deliveries, where, values)

    def get_delivery(self, delivery_id: str) -> DeliveryRecord | None:
        return self._first(
            DeliveryRecord,
            sa.select(webhook_deliveries).where(webhook_deliveries.c.delivery_id == delivery_id),
        )

    def list_deliveries(self, limit: int = 50) -> list[DeliveryRecord]:
        return self._all(
            DeliveryRecord,
            sa.select(webhook_deliveries)
            .order_by(webhook_deliveries.c.received_at.desc())
            .limit(limit),
        )
