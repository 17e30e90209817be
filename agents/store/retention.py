"""Retention for hidden runtime records. User-visible memory and agent notes are never pruned,
nor are runs, workers, review keys or the audit log of mutations (an incident needs those)."""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy as sa

from agents.store.base import StoreBase, StoreError, utcnow
from agents.store.records import PruneCounts
from agents.store.schema import github_calls, llm_calls, rate_limit_snapshots, transcript_events

_BATCH = 5_000


class RetentionMixin(StoreBase):
    def prune(self, older_than: timedelta, *, dry_run: bool = False) -> PruneCounts:
        """Delete events, LLM calls, GitHub calls and rate-limit snapshots older than
        ``older_than``; returns how many rows of each went (``dry_run``: would go, and nothing
        is deleted)."""
        if older_than < timedelta(0):
            raise StoreError("prune older_than must not be negative")
        cutoff = utcnow() - older_than
        step = self._count if dry_run else self._prune
        return PruneCounts(
            transcript_events=step(transcript_events, transcript_events.c.created_at, cutoff),
            llm_calls=step(llm_calls, llm_calls.c.at, cutoff),
            github_calls=step(github_calls, github_calls.c.at, cutoff),
            rate_limit_snapshots=step(rate_limit_snapshots, rate_limit_snapshots.c.at, cutoff),
        )

    def _count(self, table: sa.Table, at: sa.Column[object], cutoff: object) -> int:
        query = sa.select(sa.func.count()).select_from(table).where(at < cutoff)
        with self._db.read() as conn:
            return int(conn.execute(query).scalar_one())

    def _prune(self, table: sa.Table, at: sa.Column[object], cutoff: object) -> int:
        # Batches keep each write transaction short so live workers are not stalled.
        total = 0
        while True:
            ids = sa.select(table.c.id).where(at < cutoff).limit(_BATCH).scalar_subquery()
            with self._db.write() as conn:
                deleted = conn.execute(sa.delete(table).where(table.c.id.in_(ids))).rowcount
            total += deleted
            if deleted < _BATCH:
                return total
