"""Moving a whole store to another database (``swarm store copy``), nothing lost or paid twice.

What makes a run skip work it already did is in the store: the review keys (claimed and
posted), the runs and workers, the notes and memories. A store started empty on the new
database would pay for every reviewed pull request again, so the copy keeps every row as it
was, ids included:

- the target is migrated to the current schema and filled in ONE transaction, which also holds
  the migration lock (and, on PostgreSQL, a lock on every table), so another process opening the
  target waits and then finds either nothing or the whole copy, never half of it;
- a target that already holds rows is refused, and left as it was;
- the source is read in one snapshot, table by table in batches (never a whole table in memory),
  parents before children;
- JSON columns move as their JSON text, so SQL NULL (no value) stays SQL NULL and JSON ``null``
  stays JSON ``null``: read through the JSON type, both would come back as ``None`` and be
  written back as one of them;
- on PostgreSQL each id sequence is moved past the largest copied id, so the next insert does
  not collide with a copied row.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from agents.errors import SwarmError
from agents.store.engine import Database, default_sqlite_url, make_engine, parse_store_url
from agents.store.migrate import upgrade_to_head, upgrade_within
from agents.store.schema import metadata

# Rows read and written per round trip: small enough that a batch of transcript events (each
# up to a tool output's preview) stays a few megabytes.
BATCH_ROWS = 500


class StoreCopyError(SwarmError):
    """The copy cannot be made as asked (same store, target not empty, unreachable, a row the
    target refuses); nothing was written to the target."""


@dataclass(frozen=True)
class StoreLocation:
    """A store's database and what the person called it (``--to``, ``SWARM_STORE_URL``...)."""

    url: str | None
    data_dir: Path
    setting: str

    def parsed(self) -> sa.URL:
        return parse_store_url(self.url, self.setting) if self.url else _default_url(self)


@dataclass(frozen=True)
class CopyResult:
    """Rows per table, in the order they were (or would be) copied."""

    source: str
    target: str
    tables: list[tuple[str, int]]

    @property
    def rows(self) -> int:
        return sum(n for _, n in self.tables)


def copy_store(
    source: StoreLocation, target: StoreLocation, *, dry_run: bool, batch_rows: int = BATCH_ROWS
) -> CopyResult:
    """Copy every row of ``source`` into the empty database ``target`` (or, ``dry_run``, count
    them and write nothing to ``target``)."""
    from_url, to_url = source.parsed(), target.parsed()
    if _same_database(from_url, to_url):
        raise StoreCopyError(
            f"{target.setting} names the store being copied ({shown(from_url)}); "
            "give the new, empty database"
        )
    if from_url.get_backend_name() == "sqlite" and not Path(from_url.database or "").exists():
        # Opening it would make an empty store there, and copy nothing.
        raise StoreCopyError(f"{source.setting} names no store: {from_url.database} does not exist")
    with _opened(source) as src_db:
        upgrade_to_head(src_db)  # as every command opening it does: the tables below are head's
        if dry_run:
            _refuse_held(target, to_url, _held_rows_untouched(target, to_url))
            with src_db.snapshot() as src:
                counts = [(t.name, _count(src, t)) for t in _tables()]
        else:
            with _opened(target) as dst_db, src_db.snapshot() as src, dst_db.write() as dst:
                # Refusing raises inside the transaction: the migration just made is undone too.
                _refuse_held(target, to_url, _prepare_target(dst, dst_db))
                counts = [(t.name, _copy_table(src, dst, t, batch_rows)) for t in _tables()]
                if not dst_db.is_sqlite:
                    _move_sequences(dst)
    return CopyResult(shown(from_url), shown(to_url), counts)


def shown(url: sa.URL) -> str:
    """The URL as a message may show it: without its password, a SQLite file as its path."""
    if url.get_backend_name() == "sqlite":
        return url.database or ""
    return _without_password(url).render_as_string(hide_password=False)


def _without_password(url: sa.URL) -> sa.URL:
    # Not ``url.set(password=None)``: ``set`` leaves a part given as None as it was.
    return sa.URL.create(
        url.drivername, url.username, None, url.host, url.port, url.database, url.query
    )


def _refuse_held(target: StoreLocation, url: sa.URL, held: dict[str, int]) -> None:
    if held:
        raise StoreCopyError(
            f"{target.setting} already holds a store ({sum(held.values())} row(s) in "
            f"{len(held)} table(s), {shown(url)}); swarm store copy only fills an empty "
            "database, so nothing was copied"
        )


def _tables() -> list[sa.Table]:
    return list(metadata.sorted_tables)


def _default_url(location: StoreLocation) -> sa.URL:
    return parse_store_url(default_sqlite_url(location.data_dir), location.setting)


def _same_database(a: sa.URL, b: sa.URL) -> bool:
    if a.get_backend_name() != b.get_backend_name():
        return False
    if a.get_backend_name() == "sqlite":
        return os.path.realpath(a.database or "") == os.path.realpath(b.database or "")
    # The user and driver do not change which database it is; a schema in the options does.
    return (a.host or "localhost", a.port or 5432, a.database, sorted(a.query.items())) == (
        b.host or "localhost",
        b.port or 5432,
        b.database,
        sorted(b.query.items()),
    )


@contextmanager
def _opened(location: StoreLocation) -> Iterator[Database]:
    db = Database(make_engine(location.url, location.data_dir, location.setting))
    try:
        _reach(db, location)
        yield db
    finally:
        db.dispose()


def _reach(db: Database, location: StoreLocation) -> None:
    """One line naming the flag or setting when the database does not answer."""
    try:
        with db.engine.connect():
            pass
    except (sa.exc.OperationalError, sa.exc.InterfaceError) as exc:
        cause = str(getattr(exc, "orig", None) or exc).strip().splitlines()
        raise StoreCopyError(
            f"cannot open the store {location.setting} names ({shown(db.engine.url)}): "
            f"{cause[0] if cause else type(exc).__name__}"
        ) from None


def _held_rows_untouched(target: StoreLocation, url: sa.URL) -> dict[str, int]:
    """The target's rows, read without creating or migrating anything (a dry run)."""
    if url.get_backend_name() == "sqlite" and not Path(url.database or "").exists():
        return {}
    with _opened(target) as db, db.read() as conn:
        return _rows_held(conn)


def _prepare_target(dst: sa.Connection, db: Database) -> dict[str, int]:
    """Migrate the target and lock it for the copy; the rows it holds already, if any."""
    upgrade_within(dst, db)
    if not db.is_sqlite:
        # SQLite's write transaction excludes other writers already; PostgreSQL's tables are
        # locked so that no process writes between the check below and the commit.
        names = ", ".join(dst.dialect.identifier_preparer.quote(t.name) for t in _tables())
        dst.exec_driver_sql(f"LOCK TABLE {names} IN EXCLUSIVE MODE")
    return _rows_held(dst)


def _rows_held(conn: sa.Connection) -> dict[str, int]:
    present = set(sa.inspect(conn).get_table_names())
    counts = {t.name: _count(conn, t) for t in _tables() if t.name in present}
    return {name: n for name, n in counts.items() if n}


def _count(conn: sa.Connection, table: sa.Table) -> int:
    return int(conn.scalar(sa.select(sa.func.count()).select_from(table)) or 0)


def _json_columns(table: sa.Table) -> list[sa.Column[object]]:
    return [c for c in table.columns if isinstance(c.type, sa.JSON)]


def _copy_table(src: sa.Connection, dst: sa.Connection, table: sa.Table, batch_rows: int) -> int:
    """Stream ``table`` from ``src`` into ``dst``, ids and JSON text as they are."""
    as_json = {c.name for c in _json_columns(table)}
    read = sa.select(
        *(sa.cast(c, sa.Text).label(c.name) if c.name in as_json else c for c in table.columns)
    ).order_by(*table.primary_key.columns)
    write = sa.insert(table).values({name: _json_text_param(dst, table, name) for name in as_json})
    copied = 0
    result = src.execute(read.execution_options(yield_per=batch_rows))
    for part in result.partitions():
        rows = [
            {(f"{k}__json" if k in as_json else k): v for k, v in row._mapping.items()}
            for row in part
        ]
        try:
            dst.execute(write, rows)
        except sa.exc.DBAPIError as exc:
            cause = str(exc.orig or exc).strip().splitlines()
            raise StoreCopyError(
                f"the target refused a row of {table.name} ({cause[0] if cause else 'no reason'}); "
                "nothing was copied"
            ) from None
        copied += len(rows)
    return copied


def _json_text_param(dst: sa.Connection, table: sa.Table, name: str) -> sa.ColumnElement[Any]:
    """The JSON text bound as text: None binds SQL NULL, the text ``null`` binds JSON null.
    PostgreSQL needs it cast to the column's type; SQLite keeps JSON as that text already."""
    param = sa.bindparam(f"{name}__json", type_=sa.Text)
    if dst.dialect.name == "sqlite":
        return param
    return sa.cast(param, table.c[name].type)


def _move_sequences(dst: sa.Connection) -> None:
    """Each id sequence past the largest copied id (a table left empty starts again at 1)."""
    for table in _tables():
        column = table.autoincrement_column
        if column is None:
            continue
        top = sa.func.max(column)
        sequence = sa.func.pg_get_serial_sequence(table.name, column.name)
        dst.execute(sa.select(sa.func.setval(sequence, sa.func.coalesce(top, 1), top.is_not(None))))
