"""webhook deliveries: one row per X-GitHub-Delivery, so a redelivery starts nothing

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 23:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "webhook_deliveries",
        sa.Column("delivery_id", sa.String(length=64), nullable=False),
        sa.Column("body_sha256", sa.String(length=64), nullable=False),
        sa.Column("event", sa.String(length=64), nullable=False),
        sa.Column("action", sa.String(length=64), nullable=True),
        sa.Column("repo", sa.String(length=200), nullable=True),
        sa.Column("number", sa.Integer(), nullable=True),
        sa.Column("sender", sa.String(length=200), nullable=True),
        sa.Column("outcome", sa.String(length=32), nullable=False),
        sa.Column("detail", sa.String(length=500), nullable=True),
        sa.Column("flow_run_id", sa.String(length=64), nullable=True),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("delivery_id", name=op.f("pk_webhook_deliveries")),
        sa.UniqueConstraint("body_sha256", name=op.f("uq_webhook_deliveries_body_sha256")),
    )
    op.create_index(
        op.f("ix_webhook_deliveries_received_at"),
        "webhook_deliveries",
        ["received_at"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_webhook_deliveries_received_at"), table_name="webhook_deliveries")
    op.drop_table("webhook_deliveries")
