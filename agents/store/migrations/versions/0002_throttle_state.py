"""throttle state joins the store's schema

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01 19:30:00

Before this revision the GitHub throttle's shared budget created ``swarm_throttle_state`` itself
(``create_all``, outside Alembic) in the store's database. A database where it already did keeps
its table and rows; everywhere else the table is created here.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "swarm_throttle_state"


def upgrade() -> None:
    if sa.inspect(op.get_bind()).has_table(TABLE):
        return
    op.create_table(
        TABLE,
        sa.Column("identity", sa.String(length=255), nullable=False),
        sa.Column("state", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("identity", name=op.f("pk_swarm_throttle_state")),
    )


def downgrade() -> None:
    op.drop_table(TABLE)
