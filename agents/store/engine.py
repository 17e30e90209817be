"""Engines for the shared store: SQLite (default, a file under the data dir) or PostgreSQL.

SQLite is made safe for many threads and several processes by WAL, a long busy timeout and
``BEGIN IMMEDIATE`` for every write transaction: a deferred transaction that reads first and
writes later can fail with "database is locked" without ever waiting, an immediate one queues.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

from agents.errors import SwarmError
from agents.private_files import private_file, private_folder

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: SQLite's busy timeout alone
    fcntl = None  # type: ignore[assignment]

SQLITE_BUSY_TIMEOUT_MS = 60_000
# How long a new PostgreSQL connection waits for a slot on a full server (as SQLite's writers wait
# for the lock).
PG_FULL_WAIT_S = 60.0
DB_FILE_NAME = "swarm.db"
_BEGIN_OPTION = "swarm_sqlite_begin"


class StoreConfigError(SwarmError, ValueError):
    """The store URL or data directory is unusable; the message says which and why."""


def default_sqlite_url(data_dir: Path) -> str:
    return f"sqlite:///{(data_dir / DB_FILE_NAME).resolve()}"


def make_engine(url: str | None, data_dir: Path, setting: str = "SWARM_STORE_URL") -> Engine:
    """Build an engine for ``url`` (or a SQLite file in ``data_dir`` when ``url`` is None).
    ``setting`` is what a message calls the URL: where the person gave it (a flag or a variable)."""
    if url is None:
        # The store holds transcripts with previews of repository files: this user's alone.
        private_folder(data_dir, "the data directory (SWARM_DATA_DIR)")
        url = default_sqlite_url(data_dir)
    parsed = parse_store_url(url, setting)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return _sqlite_engine(parsed, setting)
    if backend == "postgresql":
        # psycopg (3) is the driver swarm ships; psycopg2 URLs mean the same database.
        if parsed.get_driver_name() != "psycopg":
            parsed = parsed.set(drivername="postgresql+psycopg")
        # hide_parameters: a driver error must never echo row values into a log or traceback.
        engine = sa.create_engine(
            parsed, pool_pre_ping=True, pool_size=10, max_overflow=20, hide_parameters=True
        )
        event.listen(engine, "do_connect", _connect_when_a_slot_frees)
        return engine
    raise StoreConfigError(
        f"{setting} backend {backend!r} is not supported; use sqlite:/// or postgresql+psycopg://"
    )


def _connect_when_a_slot_frees(
    dialect: sa.Dialect, _record: object, cargs: tuple[object, ...], cparams: dict[str, object]
) -> object:
    """Connect to PostgreSQL, waiting while the server has no connection slot free.

    A full server refuses a new connection at once ("sorry, too many clients already", or "too
    many connections for role/database" under a role's or database's limit; SQLSTATE 53300)
    instead of queueing it. Every worker process keeps a pool of its own, so a swarm that peaks
    while other programs share the server met that refusal: a worker process failed on its first
    write although the slots came free a moment later. Such a refusal is waited out, up to
    ``PG_FULL_WAIT_S``; any other connection error is raised as it is."""
    deadline = time.monotonic() + PG_FULL_WAIT_S
    pause = 0.05
    while True:
        try:
            return dialect.connect(*cargs, **cparams)
        except Exception as exc:
            if "too many c" not in str(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 1.0)


def parse_store_url(url: str, setting: str = "SWARM_STORE_URL") -> sa.URL:
    try:
        return sa.engine.make_url(url)
    except (sa.exc.ArgumentError, ValueError):
        # A bad port or bracket raises ValueError; the URL is not shown (it may hold a password).
        raise StoreConfigError(
            f"{setting} is not a database URL (expected postgresql+psycopg://USER@HOST/DB "
            "or sqlite:////PATH/swarm.db; the value is not shown, it may hold a password)"
        ) from None


def _sqlite_engine(url: sa.URL, setting: str) -> Engine:
    database = url.database or ""
    if database in ("", ":memory:") or database.startswith("file::memory:"):
        raise StoreConfigError(
            f"{setting} points at an in-memory SQLite database; the store must be a file "
            "shared by every worker process"
        )
    folder = Path(database).parent
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreConfigError(
            f"{setting}: the folder {folder} cannot be created ({exc.strerror})"
        ) from None
    if not database.startswith("file:"):
        # Made 0600 before SQLite creates it with the umask's 0644; its -wal and -shm files
        # take the database's mode.
        private_file(Path(database), "the store file")
    try:
        engine = sa.create_engine(
            url,
            connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000, "check_same_thread": False},
            pool_size=16,
            max_overflow=48,
            hide_parameters=True,
        )
    except sa.exc.ArgumentError:
        raise StoreConfigError(
            f"{setting} is not a SQLite file URL (expected sqlite:////PATH/swarm.db, "
            "without user, password or host)"
        ) from None

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: sqlite3.Connection, _record: object) -> None:
        # Driver autocommit, so that BEGIN below is the only transaction start.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = conn.get_execution_options().get(_BEGIN_OPTION, "DEFERRED")
        conn.exec_driver_sql(f"BEGIN {mode}")

    return engine


class _SqliteWriteGate:
    """Serialises SQLite writers before they reach SQLite's own lock.

    SQLite's busy handler polls with sleeps of up to 100 ms, so with dozens of waiting writers
    the lock sits idle between polls and throughput collapses. Queuing on a thread lock (within
    the process) and an ``flock`` on a side file (across processes) hands the lock over the
    moment it is released; the busy timeout remains as the backstop.
    """

    def __init__(self, database_path: str) -> None:
        self._path = database_path + ".write-lock"
        self._thread_lock = threading.Lock()
        self._fd: int | None = None
        self._fd_pid = -1

    @contextmanager
    def hold(self) -> Iterator[None]:
        with self._thread_lock:
            fd = self._file()
            if fd is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                if fd is not None:
                    fcntl.flock(fd, fcntl.LOCK_UN)

    def _file(self) -> int | None:
        if fcntl is None:
            return None
        if self._fd is None or self._fd_pid != os.getpid():
            # A forked child must not share the parent's open file description (flock is per
            # description, so parent and child would not exclude each other).
            self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
            self._fd_pid = os.getpid()
        return self._fd


class Database:
    """An engine plus the two kinds of transaction the store uses."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name
        self._pid = os.getpid()
        self._gate = (
            _SqliteWriteGate(engine.url.database or "") if self.dialect == "sqlite" else None
        )

    @property
    def is_sqlite(self) -> bool:
        return self.dialect == "sqlite"

    def _check_fork(self) -> None:
        # Pooled connections must not cross a fork: the child would share the parent's sockets.
        if os.getpid() != self._pid:
            self.engine.dispose(close=False)
            self._pid = os.getpid()
            if self._gate is not None:  # a thread lock held at fork time would never be freed
                self._gate = _SqliteWriteGate(self.engine.url.database or "")

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """A transaction that takes the write lock up front (SQLite) and commits on exit."""
        self._check_fork()
        if self._gate is None:
            with self.engine.connect() as conn, conn.begin():
                yield conn
            return
        with self._gate.hold(), self.engine.connect() as conn:
            conn.execution_options(**{_BEGIN_OPTION: "IMMEDIATE"})
            with conn.begin():
                yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        self._check_fork()
        with self.engine.connect() as conn, conn.begin():
            yield conn

    @contextmanager
    def snapshot(self) -> Iterator[Connection]:
        """A read transaction that sees the database as it was at its first read, however many
        statements it runs: PostgreSQL's REPEATABLE READ (its default would see each statement's
        own moment); a SQLite read transaction under WAL keeps its snapshot by itself."""
        self._check_fork()
        with self.engine.connect() as conn:
            if not self.is_sqlite:
                conn.execution_options(isolation_level="REPEATABLE READ")
            with conn.begin():
                yield conn

    def dispose(self) -> None:
        self.engine.dispose()
