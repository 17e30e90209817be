"""Tables of the shared store (SQLAlchemy Core). Alembic migrations create them; never edit
a table here without adding a migration under ``agents/store/migrations/versions``.

Full-text search objects are backend-specific and live only in the migrations: a contentless
FTS5 table ``transcript_fts`` on SQLite, a generated ``search_vector`` column on PostgreSQL.
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

metadata = sa.MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)


class UTCDateTime(sa.TypeDecorator[datetime]):
    """Stores UTC; always hands back timezone-aware datetimes (SQLite would drop the zone)."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the store; pass a timezone-aware one")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Clipped(sa.TypeDecorator[str]):
    """A bounded string that is cut to fit rather than refused: PostgreSQL rejects an
    over-long value where SQLite would keep it, and the store must behave the same on both."""

    impl = sa.String
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: sa.Dialect) -> str | None:
        limit: int | None = getattr(self.impl_instance, "length", None)
        if value is None or limit is None or len(value) <= limit:
            return value
        return value[: limit - 1] + "…"


JSONType: sa.JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
BigID: sa.types.TypeEngine[int] = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _key(name: str = "id", length: int = 64) -> sa.Column[str]:
    return sa.Column(name, sa.String(length), primary_key=True)


def _at(name: str = "at", nullable: bool = False) -> sa.Column[datetime]:
    return sa.Column(name, UTCDateTime(), nullable=nullable)


swarm_runs = sa.Table(
    "swarm_runs",
    metadata,
    _key(),
    sa.Column("trigger", Clipped(200), nullable=False),
    sa.Column("prefect_flow_run_id", Clipped(64)),
    sa.Column("status", sa.String(32), nullable=False),
    _at("started_at"),
    _at("finished_at", nullable=True),
    sa.Column("totals", JSONType, nullable=False),
)

workers = sa.Table(
    "workers",
    metadata,
    _key(),
    sa.Column("run_id", sa.String(64), sa.ForeignKey("swarm_runs.id"), nullable=False, index=True),
    sa.Column("role_chain", JSONType, nullable=False),
    sa.Column("identity_login", Clipped(200)),
    sa.Column("envelope_id", Clipped(100)),
    sa.Column("envelope_hash", Clipped(100)),
    sa.Column("token_fingerprint", Clipped(100)),
    sa.Column("task", JSONType, nullable=False),
    sa.Column("status", sa.String(32), nullable=False, index=True),
    sa.Column("blocked_reason", sa.Text),
    sa.Column("budgets_used", JSONType, nullable=False),
    # Per-worker event counter: bumping it row-locks the worker, which makes sequence numbers
    # gap-free and unique on both backends without a table lock.
    sa.Column("last_seq", sa.Integer, nullable=False, server_default="0"),
    _at("heartbeat_at", nullable=True),
    sa.Column("pid", sa.Integer),
    sa.Column("host", Clipped(255)),
    _at("started_at"),
    _at("finished_at", nullable=True),
)

transcript_events = sa.Table(
    "transcript_events",
    metadata,
    sa.Column("id", BigID, primary_key=True, autoincrement=True),
    sa.Column("worker_id", sa.String(64), sa.ForeignKey("workers.id"), nullable=False),
    sa.Column("run_id", sa.String(64), nullable=False),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("kind", sa.String(32), nullable=False),
    sa.Column("content", JSONType, nullable=False),
    sa.Column("search_text", sa.Text, nullable=False),
    sa.Column("tokens", sa.Integer, nullable=False),
    sa.Column("cost", sa.Float, nullable=False),
    _at("created_at"),
    sa.UniqueConstraint("worker_id", "seq"),
    sa.Index(None, "run_id", "id"),
    sa.Index(None, "created_at"),
)

prompt_prefixes = sa.Table(
    "prompt_prefixes",
    metadata,
    _key("hash", 100),
    sa.Column("body", sa.Text, nullable=False),
    _at("created_at"),
)

llm_calls = sa.Table(
    "llm_calls",
    metadata,
    sa.Column("id", BigID, primary_key=True, autoincrement=True),
    sa.Column("worker_id", sa.String(64), sa.ForeignKey("workers.id"), index=True),
    sa.Column("model", Clipped(100), nullable=False),
    sa.Column("prefix_hash", Clipped(100)),
    sa.Column("role_chain", JSONType, nullable=False),
    sa.Column("input_tokens", sa.Integer, nullable=False),
    sa.Column("cache_read_tokens", sa.Integer, nullable=False),
    sa.Column("cache_write_tokens", sa.Integer, nullable=False),
    sa.Column("output_tokens", sa.Integer, nullable=False),
    sa.Column("cost", sa.Float, nullable=False),
    sa.Column("latency_ms", sa.Integer, nullable=False),
    sa.Column("stop_reason", Clipped(64)),
    sa.Column("cache_miss", sa.Boolean, nullable=False),
    _at(),
    # The hash of the session's frozen memory snapshot (part of the prefix, recorded apart so a
    # person can tell which memories a call saw).
    sa.Column("memory_hash", Clipped(100)),
    sa.Index(None, "at"),
)


def _call_columns() -> list[sa.Column[object]]:
    """Who called which GitHub route on what, and how it answered."""
    return [
        sa.Column("identity", Clipped(200), nullable=False),
        sa.Column("worker_id", sa.String(64)),
        sa.Column("method", sa.String(10), nullable=False),
        sa.Column("route", Clipped(300), nullable=False),
        sa.Column("target", Clipped(500)),
        sa.Column("status", sa.Integer),
        sa.Column("ratelimit_remaining", sa.Integer),
    ]


github_calls = sa.Table(
    "github_calls",
    metadata,
    sa.Column("id", BigID, primary_key=True, autoincrement=True),
    *_call_columns(),
    sa.Column("resource", Clipped(50)),
    sa.Column("latency_ms", sa.Integer),
    _at(),
    sa.Index(None, "at"),
)

# Mutations are kept apart from the call log so retention can drop calls and keep the audit.
audit_log = sa.Table(
    "audit_log",
    metadata,
    sa.Column("id", BigID, primary_key=True, autoincrement=True),
    *_call_columns(),
    _at(),
    sa.Index(None, "identity", "at"),
)

rate_limit_snapshots = sa.Table(
    "rate_limit_snapshots",
    metadata,
    sa.Column("id", BigID, primary_key=True, autoincrement=True),
    sa.Column("identity", Clipped(200), nullable=False),
    sa.Column("resource", Clipped(50), nullable=False),
    sa.Column("limit", sa.Integer),
    sa.Column("remaining", sa.Integer),
    _at("reset_at", nullable=True),
    _at("paused_until", nullable=True),
    sa.Column("by_worker", JSONType, nullable=False),
    _at(),
    sa.Index(None, "identity", "resource", "at"),
)

review_keys = sa.Table(
    "review_keys",
    metadata,
    _key("key", 400),
    sa.Column("worker_id", sa.String(64), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("review_id", sa.BigInteger),
    sa.Column("review_url", Clipped(500)),
    _at(),
    # What the worker still has to do after this write was posted (a review's thread closings
    # and summary), as the data it needs; empty once done, and for writes that end the work.
    sa.Column("unfinished", JSONType),
)

memories = sa.Table(
    "memories",
    metadata,
    sa.Column("id", BigID, primary_key=True, autoincrement=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("repo", Clipped(200)),
    sa.Column("role", Clipped(100)),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("author", Clipped(200), nullable=False),
    sa.Column("author_kind", sa.String(16), nullable=False),
    sa.Column("run_id", sa.String(64)),
    _at("created_at"),
    sa.Column("supersedes", sa.BigInteger),
    sa.Column("superseded_by", sa.BigInteger),
    _at("deleted_at", nullable=True),
    sa.Column("deleted_by", Clipped(200)),
    # active (workers see it), proposed (waits for `swarm memory review`), rejected (kept so the
    # same feedback is never proposed twice).
    sa.Column("state", sa.String(16), nullable=False, server_default="active"),
    # Provenance beyond the author: the worker and pull request it came from, and for a learning
    # the review comment and reply it was read from (``source``), keyed once (``source_key``).
    sa.Column("worker_id", sa.String(64)),
    sa.Column("pr_number", sa.Integer),
    sa.Column("source", JSONType),
    sa.Column("source_key", sa.String(300)),
    sa.Index(None, "repo", "role"),
    sa.Index(None, "source_key", unique=True),
)

agent_notes = sa.Table(
    "agent_notes",
    metadata,
    sa.Column("id", BigID, primary_key=True, autoincrement=True),
    sa.Column("worker_id", sa.String(64), nullable=False, index=True),
    sa.Column("run_id", sa.String(64)),
    sa.Column("repo", Clipped(200)),
    sa.Column("role", Clipped(100)),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    _at("created_at"),
    # The pull request (or issue) the worker worked on: a re-review reads its continuity.
    sa.Column("pr_number", sa.Integer),
)

# One JSON document per identity, read and rewritten under a row lock by ``StateRowsMixin``
# (the GitHub throttle's shared budget). Text, not JSON: the store never looks inside, and the
# shape matches the table earlier versions created outside the migrations.
throttle_state = sa.Table(
    "swarm_throttle_state",
    metadata,
    _key("identity", 255),
    sa.Column("state", sa.Text, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
)

# One row per GitHub webhook delivery (``X-GitHub-Delivery``): inserting it is the atomic "first
# time seen" check, so a redelivery starts nothing. The delivery id header is not signed, so the
# signed body's hash is unique too: a captured delivery replayed under a new id starts nothing
# either. ``outcome`` says what became of it.
webhook_deliveries = sa.Table(
    "webhook_deliveries",
    metadata,
    _key("delivery_id", 64),
    sa.Column("body_sha256", sa.String(64), nullable=False, unique=True),
    sa.Column("event", Clipped(64), nullable=False),
    sa.Column("action", Clipped(64)),
    sa.Column("repo", Clipped(200)),
    sa.Column("number", sa.Integer),
    sa.Column("sender", Clipped(200)),
    sa.Column("outcome", sa.String(32), nullable=False),
    sa.Column("detail", Clipped(500)),
    sa.Column("flow_run_id", Clipped(64)),
    _at("received_at"),
    _at("finished_at", nullable=True),
    # What the delivery asks for (its routed work, plain data), so a receiver that died
    # before finishing it, or the next one after a restart, can still do it.
    sa.Column("work", JSONType),
    # The receiver doing the work now, and until when its claim holds unless renewed.
    sa.Column("claimed_by", sa.String(128)),
    _at("claimed_until", nullable=True),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    # The final state of the flow run that did the work (Completed, Failed, Crashed...).
    sa.Column("flow_state", Clipped(32)),
    sa.Index(None, "received_at"),
    sa.Index(None, "outcome"),
)
