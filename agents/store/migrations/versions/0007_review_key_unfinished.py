"""a posted write's unfinished rest: what a review worker still has to do after its review

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-05 12:40:00

A review is one write, but the worker's work goes on after it: the fixed findings' threads are
closed and the summary comment is written. A run interrupted in between left a review on GitHub
and no summary, and the next run, finding the review posted, never wrote it. The review's key
row now keeps, until that rest is done, what the rest needs (the findings, the text of what
changed, the threads to close, what the review cost) as data, so the next run finishes it
without the model. Rows written before keep it empty: nothing left to finish, as before.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("review_keys") as batch:
        batch.add_column(sa.Column("unfinished", _JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("review_keys") as batch:
        batch.drop_column("unfinished")
