"""initial schema

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-29 14:01:13.724369
"""

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A migration is a frozen record of what it built: these helpers are its own, never imported
# from agents.store.schema (which moves on).
JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def _serial() -> sa.Column[Any]:
    return sa.Column(
        "id",
        sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
        autoincrement=True,
        nullable=False,
    )


def _str(name: str, length: int | None = None, nullable: bool = True) -> sa.Column[Any]:
    kind = sa.Text() if length is None else sa.String(length=length)
    return sa.Column(name, kind, nullable=nullable)


def _int(name: str, nullable: bool = True) -> sa.Column[Any]:
    return sa.Column(name, sa.Integer(), nullable=nullable)


def _at(name: str = "at", nullable: bool = False) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _json(name: str) -> sa.Column[Any]:
    return sa.Column(name, JSON, nullable=False)


def _pk(table: str, *columns: str) -> sa.PrimaryKeyConstraint:
    return sa.PrimaryKeyConstraint(*(columns or ("id",)), name=op.f(f"pk_{table}"))


def _fk(table: str, column: str, target: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column], [f"{target}.id"], name=op.f(f"fk_{table}_{column}_{target}")
    )


def _index(table: str, *columns: str) -> sa.Index:
    return sa.Index(op.f(f"ix_{table}_{'_'.join(columns)}"), *columns, unique=False)


def _call_columns() -> list[sa.Column[Any]]:
    return [
        _str("identity", 200, nullable=False),
        _str("worker_id", 64),
        _str("method", 10, nullable=False),
        _str("route", 300, nullable=False),
        _str("target", 500),
        _int("status"),
        _int("ratelimit_remaining"),
    ]


def upgrade() -> None:
    op.create_table(
        "agent_notes",
        _serial(),
        _str("worker_id", 64, nullable=False),
        _str("run_id", 64),
        _str("repo", 200),
        _str("role", 100),
        _str("kind", 16, nullable=False),
        _str("body", nullable=False),
        _at("created_at"),
        _pk("agent_notes"),
        _index("agent_notes", "worker_id"),
    )
    op.create_table(
        "audit_log",
        _serial(),
        *_call_columns(),
        _at(),
        _pk("audit_log"),
        _index("audit_log", "identity", "at"),
    )
    op.create_table(
        "github_calls",
        _serial(),
        *_call_columns(),
        _str("resource", 50),
        _int("latency_ms"),
        _at(),
        _pk("github_calls"),
        _index("github_calls", "at"),
    )
    op.create_table(
        "memories",
        _serial(),
        _str("kind", 16, nullable=False),
        _str("repo", 200),
        _str("role", 100),
        _str("body", nullable=False),
        _str("author", 200, nullable=False),
        _str("author_kind", 16, nullable=False),
        _str("run_id", 64),
        _at("created_at"),
        sa.Column("supersedes", sa.BigInteger(), nullable=True),
        sa.Column("superseded_by", sa.BigInteger(), nullable=True),
        _at("deleted_at", nullable=True),
        _str("deleted_by", 200),
        _pk("memories"),
        _index("memories", "repo", "role"),
    )
    op.create_table(
        "prompt_prefixes",
        _str("hash", 100, nullable=False),
        _str("body", nullable=False),
        _at("created_at"),
        _pk("prompt_prefixes", "hash"),
    )
    op.create_table(
        "rate_limit_snapshots",
        _serial(),
        _str("identity", 200, nullable=False),
        _str("resource", 50, nullable=False),
        _int("limit"),
        _int("remaining"),
        _at("reset_at", nullable=True),
        _at("paused_until", nullable=True),
        _json("by_worker"),
        _at(),
        _pk("rate_limit_snapshots"),
        _index("rate_limit_snapshots", "identity", "resource", "at"),
    )
    op.create_table(
        "review_keys",
        _str("key", 400, nullable=False),
        _str("worker_id", 64, nullable=False),
        _str("state", 16, nullable=False),
        sa.Column("review_id", sa.BigInteger(), nullable=True),
        _str("review_url", 500),
        _at(),
        _pk("review_keys", "key"),
    )
    op.create_table(
        "swarm_runs",
        _str("id", 64, nullable=False),
        _str("trigger", 200, nullable=False),
        _str("prefect_flow_run_id", 64),
        _str("status", 32, nullable=False),
        _at("started_at"),
        _at("finished_at", nullable=True),
        _json("totals"),
        _pk("swarm_runs"),
    )
    op.create_table(
        "workers",
        _str("id", 64, nullable=False),
        _str("run_id", 64, nullable=False),
        _json("role_chain"),
        _str("identity_login", 200),
        _str("envelope_id", 100),
        _str("envelope_hash", 100),
        _str("token_fingerprint", 100),
        _json("task"),
        _str("status", 32, nullable=False),
        _str("blocked_reason"),
        _json("budgets_used"),
        sa.Column("last_seq", sa.Integer(), server_default="0", nullable=False),
        _at("heartbeat_at", nullable=True),
        _int("pid"),
        _str("host", 255),
        _at("started_at"),
        _at("finished_at", nullable=True),
        _fk("workers", "run_id", "swarm_runs"),
        _pk("workers"),
        _index("workers", "run_id"),
        _index("workers", "status"),
    )
    op.create_table(
        "llm_calls",
        _serial(),
        _str("worker_id", 64),
        _str("model", 100, nullable=False),
        _str("prefix_hash", 100),
        _json("role_chain"),
        *(
            _int(name, nullable=False)
            for name in ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens")
        ),
        sa.Column("cost", sa.Float(), nullable=False),
        _int("latency_ms", nullable=False),
        _str("stop_reason", 64),
        sa.Column("cache_miss", sa.Boolean(), nullable=False),
        _at(),
        _fk("llm_calls", "worker_id", "workers"),
        _pk("llm_calls"),
        _index("llm_calls", "at"),
        _index("llm_calls", "worker_id"),
    )
    op.create_table(
        "transcript_events",
        _serial(),
        _str("worker_id", 64, nullable=False),
        _str("run_id", 64, nullable=False),
        _int("seq", nullable=False),
        _str("kind", 32, nullable=False),
        _json("content"),
        _str("search_text", nullable=False),
        _int("tokens", nullable=False),
        sa.Column("cost", sa.Float(), nullable=False),
        _at("created_at"),
        _fk("transcript_events", "worker_id", "workers"),
        _pk("transcript_events"),
        sa.UniqueConstraint("worker_id", "seq", name=op.f("uq_transcript_events_worker_id_seq")),
        _index("transcript_events", "created_at"),
        _index("transcript_events", "run_id", "id"),
    )
    _create_full_text_search()


# SQLite: a contentless FTS5 table kept in step by triggers. The ``scope`` column holds one
# token per worker and per run (hex of the id, so any id becomes a single token) so that a
# session-scoped search intersects posting lists instead of filtering every match afterwards.
_SQLITE_FTS = [
    "CREATE VIRTUAL TABLE transcript_fts USING fts5(body, scope, content='')",
    """CREATE TRIGGER transcript_fts_ai AFTER INSERT ON transcript_events BEGIN
        INSERT INTO transcript_fts(rowid, body, scope) VALUES (
            new.id, new.search_text, 'w' || hex(new.worker_id) || ' r' || hex(new.run_id));
    END""",
    """CREATE TRIGGER transcript_fts_ad AFTER DELETE ON transcript_events BEGIN
        INSERT INTO transcript_fts(transcript_fts, rowid, body, scope) VALUES (
            'delete', old.id, old.search_text, 'w' || hex(old.worker_id) || ' r' || hex(old.run_id));
    END""",
]
# PostgreSQL: a generated tsvector, 'simple' configuration (no stemming) over the text with
# every non-alphanumeric run turned into a space. That is how FTS5's unicode61 tokenizer splits
# words (PostgreSQL alone would keep "foo.py" or "a/b" as one token), so both backends answer
# the same queries the same way.
_PG_FTS = [
    """ALTER TABLE transcript_events ADD COLUMN search_vector tsvector
        GENERATED ALWAYS AS (to_tsvector('simple'::regconfig,
            regexp_replace(search_text, '[^[:alnum:]]+', ' ', 'g'))) STORED""",
    "CREATE INDEX ix_transcript_events_search_vector ON transcript_events USING gin (search_vector)",
]


def _create_full_text_search() -> None:
    dialect = op.get_bind().dialect.name
    for statement in _SQLITE_FTS if dialect == "sqlite" else _PG_FTS:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS transcript_fts_ai")
        op.execute("DROP TRIGGER IF EXISTS transcript_fts_ad")
        op.execute("DROP TABLE IF EXISTS transcript_fts")
    # Dependents first; a table's indexes go with it.
    for table in (
        "transcript_events",
        "llm_calls",
        "workers",
        "swarm_runs",
        "review_keys",
        "rate_limit_snapshots",
        "prompt_prefixes",
        "memories",
        "github_calls",
        "audit_log",
        "agent_notes",
    ):
        op.drop_table(table)
