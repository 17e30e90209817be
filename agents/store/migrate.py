"""Programmatic Alembic upgrade, run by ``Store.open``.

Several processes may open a fresh store at once, so the upgrade runs inside one write
transaction that holds the database's write lock (SQLite ``BEGIN IMMEDIATE``, a PostgreSQL
advisory lock): the first opener migrates, the others wait and then find the schema current.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from agents.store.engine import Database
from agents.store.schema import metadata

if TYPE_CHECKING:
    from alembic.runtime.environment import IncludeNameFn, NameFilterParentNames

ALEMBIC_INI = Path(__file__).with_name("alembic.ini")
_PG_MIGRATION_LOCK = 0x5357_524D  # "SWRM"


def _described_by_tables(name: str | None, type_: str, parents: NameFilterParentNames) -> bool:
    """False for the full-text objects only the migrations create (see ``schema``)."""
    if type_ == "table":
        return not (name or "").startswith("transcript_fts")
    if parents.get("table_name") == "transcript_events":
        return name not in ("search_vector", "ix_transcript_events_search_vector")
    return True


class CompareOptions(TypedDict):
    """The keyword arguments of Alembic's ``configure`` that say how to compare."""

    compare_type: bool
    compare_server_default: bool
    include_name: IncludeNameFn


# How Alembic compares a database with the tables: used by ``revision --autogenerate`` (env.py)
# and by the test that proves the migrations build exactly what ``schema`` declares.
COMPARE_OPTIONS: CompareOptions = {
    "compare_type": True,
    "compare_server_default": True,
    "include_name": _described_by_tables,
}


def alembic_config() -> Config:
    cfg = Config(str(ALEMBIC_INI))
    cfg.set_main_option("script_location", str(ALEMBIC_INI.with_name("migrations")))
    return cfg


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def current_revision(db: Database) -> str | None:
    with db.read() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade_to_head(db: Database) -> None:
    if current_revision(db) == head_revision():
        return
    with db.write() as conn:
        upgrade_within(conn, db)


def upgrade_within(conn: sa.Connection, db: Database) -> None:
    """Migrate to head inside ``conn``'s write transaction of ``db``, which then holds the
    migration lock until it ends: what the caller does next in it (``swarm store copy`` fills
    the new tables) is done before any other opener sees the schema, and undone with it."""
    if not db.is_sqlite:
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_MIGRATION_LOCK})
    if MigrationContext.configure(conn).get_current_revision() == head_revision():
        return
    cfg = alembic_config()
    cfg.attributes["connection"] = conn
    command.upgrade(cfg, "head")


def schema_drift(db: Database) -> list[Any]:
    """What differs between the database's schema and the tables in ``schema`` (Alembic's
    autogenerate diff); empty when migrations and tables agree."""
    with db.read() as conn:
        context = MigrationContext.configure(conn, opts=dict(COMPARE_OPTIONS))
        return list(compare_metadata(context, metadata))
