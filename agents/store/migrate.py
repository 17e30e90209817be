"""Programmatic Alembic upgrade, run by ``Store.open``.

Several processes may open a fresh store at once, so the upgrade runs inside one write
transaction that holds the database's write lock (SQLite ``BEGIN IMMEDIATE``, a PostgreSQL
advisory lock): the first opener migrates, the others wait and then find the schema current.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from agents.store.engine import Database

ALEMBIC_INI = Path(__file__).with_name("alembic.ini")
_PG_MIGRATION_LOCK = 0x5357_524D  # "SWRM"


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
    head = head_revision()
    if current_revision(db) == head:
        return
    cfg = alembic_config()
    with db.write() as conn:
        if not db.is_sqlite:
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_MIGRATION_LOCK})
        if MigrationContext.configure(conn).get_current_revision() == head:
            return
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
