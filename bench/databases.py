"""The two store databases a benchmark runs on: a fresh SQLite file and a fresh PostgreSQL schema.

PostgreSQL comes from SWARM_TEST_PG_URL (default postgresql+psycopg://postgres@127.0.0.1:5432/test);
each benchmark works in its own schema and drops it afterwards.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import sqlalchemy as sa

PG_DEFAULT = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


@contextmanager
def sqlite_dir() -> Iterator[Path]:
    """A data directory for a new SQLite store (the store URL is then None)."""
    with tempfile.TemporaryDirectory(prefix="swarm-bench-") as tmp:
        yield Path(tmp)


@contextmanager
def postgresql_url() -> Iterator[str]:
    """A URL whose search_path is a new, empty schema, dropped on exit."""
    base = os.environ.get("SWARM_TEST_PG_URL", PG_DEFAULT)
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(base)
    with admin.begin() as conn:
        conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
    try:
        yield f"{base}{'&' if '?' in base else '?'}options={quote(f'-csearch_path={schema}')}"
    finally:
        with admin.begin() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        admin.dispose()
