"""worker rows say paused and skipped as themselves

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-08 10:00:00

Until now a worker that ended paused was stored as ``failed`` and one that ended skipped as
``succeeded``: the store had no words of its own for them. Workers now store their outcome's
status as it is. A row written before keeps what it said unless its worker's last status event
(the transcript records the outcome's own word when the worker ends) says paused for a failed
row or skipped for a succeeded one: that row gets its word back. No column changes; downgrading
writes the old, coarser words again.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
# (the word the old rows hold, the outcome's own word)
_LOST = (("failed", "paused"), ("succeeded", "skipped"))
_BATCH = 500

_workers = sa.table("workers", sa.column("id", sa.String), sa.column("status", sa.String))
_events = sa.table(
    "transcript_events",
    sa.column("worker_id", sa.String),
    sa.column("seq", sa.Integer),
    sa.column("kind", sa.String),
    sa.column("content", _JSON),
)


def _set(conn: sa.Connection, ids: list[str], old: str, new: str) -> None:
    for start in range(0, len(ids), _BATCH):
        chunk = ids[start : start + _BATCH]
        conn.execute(
            sa.update(_workers)
            .where(_workers.c.id.in_(chunk), _workers.c.status == old)
            .values(status=new)
        )


def upgrade() -> None:
    conn = op.get_bind()
    last = (
        sa.select(_events.c.worker_id, sa.func.max(_events.c.seq).label("seq"))
        .where(_events.c.kind == "status")
        .group_by(_events.c.worker_id)
        .subquery()
    )
    said = (
        sa.select(_workers.c.id, _workers.c.status, _events.c.content)
        .join(last, last.c.worker_id == _workers.c.id)
        .join(
            _events,
            sa.and_(_events.c.worker_id == last.c.worker_id, _events.c.seq == last.c.seq),
        )
        .where(_workers.c.status.in_([old for old, _ in _LOST]))
    )
    found: dict[tuple[object, object], list[str]] = {pair: [] for pair in _LOST}
    for worker_id, status, content in conn.execute(said):
        word = content.get("status") if isinstance(content, dict) else None
        if (status, word) in found:
            found[(status, word)].append(worker_id)
    for old, new in _LOST:
        _set(conn, found[(old, new)], old, new)


def downgrade() -> None:
    conn = op.get_bind()
    for old, new in _LOST:
        conn.execute(sa.update(_workers).where(_workers.c.status == new).values(status=old))
