"""Webhook deliveries: the first sight of an ``X-GitHub-Delivery`` id wins, atomically."""

from __future__ import annotations

from collections.abc import Collection

import sqlalchemy as sa

from agents.store.base import StoreBase, check_id, clean, utcnow
from agents.store.records import DeliveryRecord
from agents.store.schema import webhook_deliveries

DELIVERY_OUTCOMES = ("received", "enqueued", "ignored", "refused", "failed", "done")


class DeliveriesMixin(StoreBase):
    def record_delivery(
        self,
        delivery_id: str,
        *,
        body_sha256: str,
        event: str,
        action: str | None = None,
        repo: str | None = None,
        number: int | None = None,
        sender: str | None = None,
        outcome: str = "received",
        detail: str | None = None,
    ) -> bool:
        """Record a delivery the first time its id, and its body, are seen; False when either
        was seen before (a redelivery, or a replay under another id)."""
        try:
            with self._db.write() as conn:
                conn.execute(
                    sa.insert(webhook_deliveries).values(
                        delivery_id=check_id(delivery_id, "delivery id"),
                        body_sha256=body_sha256,
                        event=clean(event),
                        action=clean(action),
                        repo=clean(repo),
                        number=number,
                        sender=clean(sender),
                        outcome=outcome,
                        detail=clean(detail),
                        received_at=utcnow(),
                    )
                )
        except sa.exc.IntegrityError:
            return False
        return True

    def finish_delivery(
        self,
        delivery_id: str,
        outcome: str,
        detail: str | None = None,
        flow_run_id: str | None = None,
        *,
        only_from: Collection[str] | None = None,
    ) -> None:
        """Record what became of a delivery; with ``only_from``, only while its outcome is one of
        those (two writers in either order: the later news is never overwritten by the older)."""
        values = {
            "outcome": outcome,
            "detail": clean(detail),
            "flow_run_id": clean(flow_run_id),
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
