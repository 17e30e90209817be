"""Alembic environment. Store.open() hands in its own connection (already inside a locked
transaction); run standalone, it builds an engine from SWARM_STORE_URL / SWARM_DATA_DIR."""

from __future__ import annotations

import os
from pathlib import Path

from alembic import context
from sqlalchemy.engine import Connection

from agents.store.engine import make_engine
from agents.store.migrate import COMPARE_OPTIONS
from agents.store.schema import metadata

config = context.config


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=True,
        **COMPARE_OPTIONS,
    )
    with context.begin_transaction():
        context.run_migrations()


given = config.attributes.get("connection")
if given is not None:
    _run(given)
else:
    url = os.environ.get("SWARM_STORE_URL") or None
    engine = make_engine(url, Path(os.environ.get("SWARM_DATA_DIR", ".swarm")))
    with engine.connect() as conn:
        _run(conn)
        conn.commit()
    engine.dispose()
