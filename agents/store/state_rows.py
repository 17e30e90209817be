"""Shared state rows: one JSON document per identity, read and rewritten under its row lock.

The GitHub throttle keeps each identity's budget here so that every process and machine using
that identity shares one budget. The store does not know the document's shape: a caller's step
gets the current document (``{}`` the first time) and returns its result and the new document,
all inside one short transaction that holds the identity's row lock (``SELECT ... FOR UPDATE``
on PostgreSQL, the database write lock on SQLite), so no two steps interleave.

Unlike every other table, the document is not passed through redaction: it holds numbers and
ids that a rewrite would corrupt, and its one writer puts no text from outside in it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import TypeVar

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from agents.json_value import JSONObject, JSONValue
from agents.store.base import StoreBase
from agents.store.schema import throttle_state

T = TypeVar("T")

StateStep = Callable[[JSONObject], tuple[T, Mapping[str, JSONValue]]]


class StateRowsMixin(StoreBase):
    def transact_state(self, identity: str, step: StateStep[T]) -> T:
        """Run ``step`` on ``identity``'s document and store the document it returns.

        The step runs while the row is locked: keep it short and free of I/O."""
        table = throttle_state
        query = sa.select(table.c.state).where(table.c.identity == identity).with_for_update()
        with self._db.write() as conn:
            if not self._db.is_sqlite:
                # Budget state is rebuilt from GitHub's headers after a crash, so a commit need
                # not wait for the disk; this halves the time each step holds the row.
                conn.exec_driver_sql("SET LOCAL synchronous_commit TO OFF")
            row = conn.execute(query).first()
            if row is None:
                insert = sqlite.insert if self._db.is_sqlite else postgresql.insert
                conn.execute(
                    insert(table)
                    .values(identity=identity, state="{}", updated_at=0.0)
                    .on_conflict_do_nothing(index_elements=["identity"])
                )
                row = conn.execute(query).one()
            result, document = step(json.loads(row.state))
            conn.execute(
                sa.update(table)
                .where(table.c.identity == identity)
                .values(state=json.dumps(document), updated_at=time.time())
            )
        return result
