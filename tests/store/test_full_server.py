"""A PostgreSQL server with no connection slot free: the store waits for one instead of failing
the worker's write, and any other connection error still comes at once."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import sqlalchemy as sa

from agents.store.engine import make_engine


@pytest.fixture
def limited_role(pg_url: str) -> Iterator[sa.URL]:
    """A login role allowed one connection at a time: its second connection is refused with
    "too many connections for role", the same SQLSTATE (53300) as a full server."""
    name = f"swarm_limited_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(pg_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE ROLE "{name}" LOGIN CONNECTION LIMIT 1')
    try:
        yield sa.make_url(pg_url).set(username=name, password=None)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(
                f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{name}'"
            )
            conn.exec_driver_sql(f'DROP ROLE IF EXISTS "{name}"')
        admin.dispose()


def test_a_connection_refused_for_a_full_server_is_made_once_a_slot_frees(
    limited_role: sa.URL, tmp_path: Path
) -> None:
    dsn = limited_role.set(drivername="postgresql").render_as_string(hide_password=False)
    holder = psycopg.connect(dsn)  # the role's only slot
    engine = make_engine(limited_role.render_as_string(hide_password=False), tmp_path)
    answered: list[object] = []

    def ask() -> None:
        try:
            with engine.connect() as conn:
                answered.append(conn.execute(sa.text("select 1")).scalar())
        except Exception as exc:
            answered.append(exc)

    asking = threading.Thread(target=ask)
    asking.start()
    time.sleep(1.0)  # the store's connection is refused meanwhile; it must keep asking
    assert not answered, f"the store gave up while the server was full: {answered}"
    holder.close()
    asking.join(timeout=30)
    engine.dispose()
    assert answered == [1]


def test_a_connection_error_that_is_not_a_full_server_is_raised_at_once(
    pg_url: str, tmp_path: Path
) -> None:
    missing = sa.make_url(pg_url).set(database=f"swarm_missing_{uuid.uuid4().hex[:8]}")
    engine = make_engine(missing.render_as_string(hide_password=False), tmp_path)
    started = time.monotonic()
    with pytest.raises(sa.exc.OperationalError, match="does not exist"):
        engine.connect()
    engine.dispose()
    # Well under the wait for a free slot (60 s): a wrong database name is not waited out.
    assert time.monotonic() - started < 20
