"""initial schema

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-29 14:01:13.724369
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0001'
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:

    op.create_table('agent_notes',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('worker_id', sa.String(length=64), nullable=False),
    sa.Column('run_id', sa.String(length=64), nullable=True),
    sa.Column('repo', sa.String(length=200), nullable=True),
    sa.Column('role', sa.String(length=100), nullable=True),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('body', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_agent_notes'))
    )
    with op.batch_alter_table('agent_notes', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_agent_notes_worker_id'), ['worker_id'], unique=False)

    op.create_table('audit_log',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('identity', sa.String(length=200), nullable=False),
    sa.Column('worker_id', sa.String(length=64), nullable=True),
    sa.Column('method', sa.String(length=10), nullable=False),
    sa.Column('route', sa.String(length=300), nullable=False),
    sa.Column('target', sa.String(length=500), nullable=True),
    sa.Column('status', sa.Integer(), nullable=True),
    sa.Column('ratelimit_remaining', sa.Integer(), nullable=True),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_audit_log'))
    )
    with op.batch_alter_table('audit_log', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_audit_log_identity_at'), ['identity', 'at'], unique=False)

    op.create_table('github_calls',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('identity', sa.String(length=200), nullable=False),
    sa.Column('worker_id', sa.String(length=64), nullable=True),
    sa.Column('method', sa.String(length=10), nullable=False),
    sa.Column('route', sa.String(length=300), nullable=False),
    sa.Column('target', sa.String(length=500), nullable=True),
    sa.Column('status', sa.Integer(), nullable=True),
    sa.Column('ratelimit_remaining', sa.Integer(), nullable=True),
    sa.Column('resource', sa.String(length=50), nullable=True),
    sa.Column('latency_ms', sa.Integer(), nullable=True),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_github_calls'))
    )
    with op.batch_alter_table('github_calls', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_github_calls_at'), ['at'], unique=False)

    op.create_table('memories',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('repo', sa.String(length=200), nullable=True),
    sa.Column('role', sa.String(length=100), nullable=True),
    sa.Column('body', sa.Text(), nullable=False),
    sa.Column('author', sa.String(length=200), nullable=False),
    sa.Column('author_kind', sa.String(length=16), nullable=False),
    sa.Column('run_id', sa.String(length=64), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('supersedes', sa.BigInteger(), nullable=True),
    sa.Column('superseded_by', sa.BigInteger(), nullable=True),
    sa.Column('deleted_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('deleted_by', sa.String(length=200), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_memories'))
    )
    with op.batch_alter_table('memories', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_memories_repo_role'), ['repo', 'role'], unique=False)

    op.create_table('prompt_prefixes',
    sa.Column('hash', sa.String(length=100), nullable=False),
    sa.Column('body', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('hash', name=op.f('pk_prompt_prefixes'))
    )
    op.create_table('rate_limit_snapshots',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('identity', sa.String(length=200), nullable=False),
    sa.Column('resource', sa.String(length=50), nullable=False),
    sa.Column('limit', sa.Integer(), nullable=True),
    sa.Column('remaining', sa.Integer(), nullable=True),
    sa.Column('reset_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('paused_until', sa.DateTime(timezone=True), nullable=True),
    sa.Column('by_worker', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_rate_limit_snapshots'))
    )
    with op.batch_alter_table('rate_limit_snapshots', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_rate_limit_snapshots_identity_resource_at'), ['identity', 'resource', 'at'], unique=False)

    op.create_table('review_keys',
    sa.Column('key', sa.String(length=400), nullable=False),
    sa.Column('worker_id', sa.String(length=64), nullable=False),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('review_id', sa.BigInteger(), nullable=True),
    sa.Column('review_url', sa.String(length=500), nullable=True),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('key', name=op.f('pk_review_keys'))
    )
    op.create_table('swarm_runs',
    sa.Column('id', sa.String(length=64), nullable=False),
    sa.Column('trigger', sa.String(length=200), nullable=False),
    sa.Column('prefect_flow_run_id', sa.String(length=64), nullable=True),
    sa.Column('status', sa.String(length=32), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('totals', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_swarm_runs'))
    )
    op.create_table('workers',
    sa.Column('id', sa.String(length=64), nullable=False),
    sa.Column('run_id', sa.String(length=64), nullable=False),
    sa.Column('role_chain', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('identity_login', sa.String(length=200), nullable=True),
    sa.Column('envelope_id', sa.String(length=100), nullable=True),
    sa.Column('envelope_hash', sa.String(length=100), nullable=True),
    sa.Column('token_fingerprint', sa.String(length=100), nullable=True),
    sa.Column('task', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('status', sa.String(length=32), nullable=False),
    sa.Column('blocked_reason', sa.Text(), nullable=True),
    sa.Column('budgets_used', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('last_seq', sa.Integer(), server_default='0', nullable=False),
    sa.Column('heartbeat_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('pid', sa.Integer(), nullable=True),
    sa.Column('host', sa.String(length=255), nullable=True),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['run_id'], ['swarm_runs.id'], name=op.f('fk_workers_run_id_swarm_runs')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_workers'))
    )
    with op.batch_alter_table('workers', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_workers_run_id'), ['run_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_workers_status'), ['status'], unique=False)

    op.create_table('llm_calls',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('worker_id', sa.String(length=64), nullable=True),
    sa.Column('model', sa.String(length=100), nullable=False),
    sa.Column('prefix_hash', sa.String(length=100), nullable=True),
    sa.Column('role_chain', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('input_tokens', sa.Integer(), nullable=False),
    sa.Column('cache_read_tokens', sa.Integer(), nullable=False),
    sa.Column('cache_write_tokens', sa.Integer(), nullable=False),
    sa.Column('output_tokens', sa.Integer(), nullable=False),
    sa.Column('cost', sa.Float(), nullable=False),
    sa.Column('latency_ms', sa.Integer(), nullable=False),
    sa.Column('stop_reason', sa.String(length=64), nullable=True),
    sa.Column('cache_miss', sa.Boolean(), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['worker_id'], ['workers.id'], name=op.f('fk_llm_calls_worker_id_workers')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_llm_calls'))
    )
    with op.batch_alter_table('llm_calls', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_llm_calls_at'), ['at'], unique=False)
        batch_op.create_index(batch_op.f('ix_llm_calls_worker_id'), ['worker_id'], unique=False)

    op.create_table('transcript_events',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('worker_id', sa.String(length=64), nullable=False),
    sa.Column('run_id', sa.String(length=64), nullable=False),
    sa.Column('seq', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('content', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('search_text', sa.Text(), nullable=False),
    sa.Column('tokens', sa.Integer(), nullable=False),
    sa.Column('cost', sa.Float(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['worker_id'], ['workers.id'], name=op.f('fk_transcript_events_worker_id_workers')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_transcript_events')),
    sa.UniqueConstraint('worker_id', 'seq', name=op.f('uq_transcript_events_worker_id_seq'))
    )
    with op.batch_alter_table('transcript_events', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_transcript_events_created_at'), ['created_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_transcript_events_run_id_id'), ['run_id', 'id'], unique=False)

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

    with op.batch_alter_table('transcript_events', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_transcript_events_run_id_id'))
        batch_op.drop_index(batch_op.f('ix_transcript_events_created_at'))

    op.drop_table('transcript_events')
    with op.batch_alter_table('llm_calls', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_llm_calls_worker_id'))
        batch_op.drop_index(batch_op.f('ix_llm_calls_at'))

    op.drop_table('llm_calls')
    with op.batch_alter_table('workers', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_workers_status'))
        batch_op.drop_index(batch_op.f('ix_workers_run_id'))

    op.drop_table('workers')
    op.drop_table('swarm_runs')
    op.drop_table('review_keys')
    with op.batch_alter_table('rate_limit_snapshots', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_rate_limit_snapshots_identity_resource_at'))

    op.drop_table('rate_limit_snapshots')
    op.drop_table('prompt_prefixes')
    with op.batch_alter_table('memories', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_memories_repo_role'))

    op.drop_table('memories')
    with op.batch_alter_table('github_calls', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_github_calls_at'))

    op.drop_table('github_calls')
    with op.batch_alter_table('audit_log', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_audit_log_identity_at'))

    op.drop_table('audit_log')
    with op.batch_alter_table('agent_notes', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_agent_notes_worker_id'))

    op.drop_table('agent_notes')

