"""Budget state in a SQL table so processes and machines sharing an identity share one budget.

Each step is one short transaction holding the identity's row lock: ``SELECT ... FOR UPDATE`` on
PostgreSQL, ``BEGIN IMMEDIATE`` (a database write lock) on SQLite. The table is this layer's own;
it lives in whatever database the caller names (normally the store's).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import Column, Float, MetaData, String, Table, Text, create_engine, event, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine, make_url

from agents.github.buckets import IdentityState

T = TypeVar("T")

metadata = MetaData()
throttle_state = Table(
    "swarm_throttle_state",
    metadata,
    Column("identity", String(255), primary_key=True),
    Column("state", Text, nullable=False),
    Column("updated_at", Float, nullable=False),
)


def _lock_sqlite_on_begin(engine: Engine) -> None:
    # pysqlite opens transactions lazily and deferred; take the write lock up front instead so
    # two processes cannot both read the old state and then both write.
    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


class SqlBudgetBackend:
    shared = True
    blocking = True

    def __init__(self, url: str) -> None:
        if not url:
            raise ValueError("SqlBudgetBackend needs a database URL (the store URL)")
        self._dialect = make_url(url).get_backend_name()
        if self._dialect not in ("sqlite", "postgresql"):
            raise ValueError(
                f"SqlBudgetBackend supports sqlite and postgresql, not {self._dialect!r}"
            )
        connect_args: dict[str, Any] = {"timeout": 30} if self._dialect == "sqlite" else {}
        self.engine = create_engine(url, connect_args=connect_args, pool_pre_ping=True)
        if self._dialect == "sqlite":
            _lock_sqlite_on_begin(self.engine)
        metadata.create_all(self.engine, checkfirst=True)

    def transact(self, identity: str, step: Callable[[IdentityState], T]) -> T:
        table = throttle_state
        query = select(table.c.state).where(table.c.identity == identity).with_for_update()
        with self.engine.begin() as conn:
            row = conn.execute(query).first()
            if row is None:
                insert = postgresql.insert if self._dialect == "postgresql" else sqlite.insert
                empty = json.dumps(IdentityState().to_dict())
                conn.execute(
                    insert(table)
                    .values(identity=identity, state=empty, updated_at=0.0)
                    .on_conflict_do_nothing(index_elements=["identity"])
                )
                row = conn.execute(query).one()
            state = IdentityState.from_dict(json.loads(row[0]))
            result = step(state)
            conn.execute(
                table.update()
                .where(table.c.identity == identity)
                .values(state=json.dumps(state.to_dict()), updated_at=time.time())
            )
        return result

    def forget(self, identity: str) -> None:
        """Drop an identity's state (a fresh start; GitHub's headers rebuild it)."""
        with self.engine.begin() as conn:
            conn.execute(throttle_state.delete().where(throttle_state.c.identity == identity))

    def close(self) -> None:
        self.engine.dispose()
