"""What every part of the store shares: the database handle, the clock and write hygiene."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypeVar, TypeVarTuple

import sqlalchemy as sa

from agents.errors import SwarmError
from agents.json_value import JSONValue
from agents.redact import redact, redact_obj
from agents.store.engine import Database

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

R = TypeVar("R", bound="DataclassInstance")
# A row's or a query's column types: every helper here takes any shape of row.
Ts = TypeVarTuple("Ts")

_ID_RE = re.compile(r"^[A-Za-z0-9_.:\-]{1,64}$")


class StoreError(SwarmError):
    """A store operation was refused; the message says what and why."""


class UnknownWorkerError(StoreError):
    pass


class UnknownRunError(StoreError):
    pass


def utcnow() -> datetime:
    return datetime.now(UTC)


def check_id(value: str, what: str) -> str:
    if not _ID_RE.match(value):
        raise StoreError(
            f"{what} {redact(value[:80])!r} is not a valid id: use 1-64 characters from "
            "A-Z a-z 0-9 _ . : -"
        )
    if redact(value) != value:
        raise StoreError(f"{what} looks like a credential; ids must not carry secrets")
    return value


def check_choice(value: str, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed:
        raise StoreError(f"{what} {value!r} is not one of: {', '.join(allowed)}")
    return value


def clean(text: str | None) -> str | None:
    """Redact a text value on its way into a table."""
    return None if text is None else redact(text)


def _jsonable(obj: object) -> JSONValue:
    if obj is None or isinstance(obj, (str, bool, int, float)):
        return obj
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    return str(obj)


def clean_json(obj: object) -> JSONValue:
    """Redact and normalise a JSON value (tuples, dates and other oddities become JSON types)."""
    # Redaction keeps the JSON shape: only strings change.
    cleaned: JSONValue = redact_obj(_jsonable(obj))
    return cleaned


_FIELD_NAMES: dict[type[DataclassInstance], tuple[str, ...]] = {}


def to_record(record: type[R], row: sa.Row[*Ts]) -> R:
    """A read-back record from a row: the record's fields by name, other columns left out."""
    names = _FIELD_NAMES.get(record)
    if names is None:
        names = _FIELD_NAMES[record] = tuple(f.name for f in dataclasses.fields(record))
    values = row._mapping
    return record(**{name: values[name] for name in names})


class StoreBase:
    """Holds the database; the store's parts are mixins over this."""

    def __init__(self, db: Database) -> None:
        self._db = db

    @property
    def dialect(self) -> str:
        return self._db.dialect

    def _all(self, record: type[R], query: sa.Select[*Ts]) -> list[R]:
        with self._db.read() as conn:
            return [to_record(record, row) for row in conn.execute(query)]

    def _first(self, record: type[R], query: sa.Select[*Ts]) -> R | None:
        with self._db.read() as conn:
            row = conn.execute(query).first()
        return None if row is None else to_record(record, row)

    def _one(self, record: type[R], query: sa.Select[*Ts], missing: StoreError) -> R:
        """The row ``query`` finds, or ``missing`` raised."""
        found = self._first(record, query)
        if found is None:
            raise missing
        return found

    def _insert(self, table: sa.Table, values: Mapping[str, object]) -> None:
        with self._db.write() as conn:
            conn.execute(sa.insert(table).values(values))

    def _update(
        self, table: sa.Table, where: sa.ColumnElement[bool], values: Mapping[str, object]
    ) -> int:
        """Update the rows ``where`` selects; returns how many there were."""
        with self._db.write() as conn:
            return conn.execute(sa.update(table).where(where).values(values)).rowcount
