"""webhook deliveries are the receiver's queue: the work, its claim, attempts, the run's end

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02 02:00:00

A delivery answered 202 is a promise: its routed work is kept on its row, a receiver claims the
row while it does the work (and renews the claim), and a receiver that starts after a crash
takes over the rows whose claim lapsed. Rows written before keep ``work`` empty: nothing to
resume, as before.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("webhook_deliveries") as batch:
        batch.add_column(sa.Column("work", _JSON, nullable=True))
        batch.add_column(sa.Column("claimed_by", sa.String(length=128), nullable=True))
        batch.add_column(sa.Column("claimed_until", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(
            sa.Column("attempts", sa.Integer(), nullable=False, server_default="0")
        )
        batch.add_column(sa.Column("flow_state", sa.String(length=32), nullable=True))
    op.create_index(
        op.f("ix_webhook_deliveries_outcome"), "webhook_deliveries", ["outcome"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_webhook_deliveries_outcome"), table_name="webhook_deliveries")
    with op.batch_alter_table("webhook_deliveries") as batch:
        for name in ("flow_state", "attempts", "claimed_until", "claimed_by", "work"):
            batch.drop_column(name)
