"""memory provenance, proposals and continuity scope

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 23:00:00

Memories gain a state (proposed learnings wait for a person), the worker and pull request they
came from, and the source of a learning (the review comment and reply) keyed once. Agent notes
gain the pull request they were written on, so a re-review reads its own continuity. LLM calls
record the hash of the session's memory snapshot beside the prefix hash.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.add_column(
        "memories",
        sa.Column("state", sa.String(length=16), nullable=False, server_default="active"),
    )
    op.add_column("memories", sa.Column("worker_id", sa.String(length=64), nullable=True))
    op.add_column("memories", sa.Column("pr_number", sa.Integer(), nullable=True))
    op.add_column("memories", sa.Column("source", _JSON, nullable=True))
    op.add_column("memories", sa.Column("source_key", sa.String(length=300), nullable=True))
    op.create_index(
        op.f("ix_memories_source_key"), "memories", ["source_key"], unique=True
    )
    op.add_column("agent_notes", sa.Column("pr_number", sa.Integer(), nullable=True))
    op.add_column("llm_calls", sa.Column("memory_hash", sa.String(length=100), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("llm_calls") as batch:
        batch.drop_column("memory_hash")
    with op.batch_alter_table("agent_notes") as batch:
        batch.drop_column("pr_number")
    op.drop_index(op.f("ix_memories_source_key"), table_name="memories")
    with op.batch_alter_table("memories") as batch:
        for column in ("source_key", "source", "pr_number", "worker_id", "state"):
            batch.drop_column(column)
