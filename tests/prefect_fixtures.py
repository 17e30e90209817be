"""The suite's one Prefect server, shared by every xdist worker (a plugin of the root conftest).

A Prefect server costs about 12 s of CPU to start (7 s from a migrated database template) and a
little CPU every second it idles; the suite is CPU-bound on CI's 2 cores. Each xdist worker used
to start Prefect's test harness (a server of its own, idling through the whole session), and the
approval gate's UI test started another. (The evals and the demo start their data directory's
local server whatever ``PREFECT_API_URL`` says: that start is theirs to test.) Now the first
worker that needs a server starts one real ``prefect server start``
(:class:`tests.prefect_server.PrefectServer`, on a new PostgreSQL database where PostgreSQL
answers, else on SQLite from the migrated template), under a file lock in the directory the
workers share, and writes its address there; the other workers read it. The session's
controller stops it and drops its database when every worker is done
(:func:`pytest_sessionfinish`); a run without xdist is its own controller.

Tests on it tell their runs apart by id, as the UI does: a flow run, a task run, a deployment of
a name of its own. Tests that need a server to themselves (the UI's run list, automations, a
work pool, the server's own start) still start their own.
"""

from __future__ import annotations

import fcntl
import inspect
import json
import os
import signal
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, suppress
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.prefect_server import PrefectServer

STATE = "server.json"


def _shared_root(config: pytest.Config) -> Path:
    """A folder every process of this session sees: the controller's base temp, which holds the
    workers' own (``popen-gwN``)."""
    factory: pytest.TempPathFactory = config._tmp_path_factory  # type: ignore[attr-defined]
    base = factory.getbasetemp()
    if hasattr(config, "workerinput"):
        base = base.parent
    root = base / "session-prefect"
    root.mkdir(parents=True, exist_ok=True)
    return root


def template_dir(config: pytest.Config) -> Path | None:
    """Where a migrated Prefect database is kept for the next server of a test to start from
    (pytest's cache; None under ``-p no:cacheprovider``)."""
    cache = getattr(config, "cache", None)
    return cache.mkdir("prefect-server") if cache is not None else None


def _healthy(api_url: str) -> bool:
    try:
        return httpx.get(f"{api_url}/health", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def session_api_url(config: pytest.Config) -> str:
    """The session's Prefect API URL, starting its server on the first call of the session."""
    root = _shared_root(config)
    with (root / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state_file = root / STATE
        if state_file.is_file():
            state = json.loads(state_file.read_text())
            if _healthy(state["api_url"]):
                return str(state["api_url"])
        database = _session_database()
        server = PrefectServer(
            root / f"server-{os.getpid()}", template_dir(config), database_url=database
        )
        try:
            server.start()
        except BaseException:
            _drop_database(database)
            raise
        assert server.process is not None
        state = {"api_url": server.api_url, "pid": server.process.pid, "database": database}
        state_file.write_text(json.dumps(state))
        return server.api_url


def _session_database() -> str | None:
    """A new PostgreSQL database for the session's server, where PostgreSQL answers; else None
    (SQLite under the server's home).

    Every xdist worker's flows write to this one server at once. On SQLite five workers' writes
    met "database is locked" (26 times in one run) and two tests failed on the server's 503:
    Prefect's SQLite set-up waits up to 60 s for a lock, but, as its own comment says
    (prefect/server/database/configurations.py, ``setup_sqlite``), a transaction that read and
    then writes gets the busy error at once. PostgreSQL's writers do not take turns."""
    import sqlalchemy as sa

    name = f"swarm_session_prefect_{uuid.uuid4().hex[:10]}"
    try:
        _on_test_postgres(f'CREATE DATABASE "{name}"')
    except Exception:
        if os.environ.get("SWARM_TEST_REQUIRE_PG") == "1":
            raise
        return None
    found = sa.make_url(_test_postgres_url()).set(drivername="postgresql+asyncpg", database=name)
    return found.render_as_string(hide_password=False)


def _drop_database(database: str | None) -> None:
    """Drop the session server's PostgreSQL database (its connections ended with it)."""
    if database is not None:
        import sqlalchemy as sa

        name = sa.make_url(database).database
        _on_test_postgres(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _test_postgres_url() -> str:
    from tests.conftest import PG_URL_DEFAULT

    return os.environ.get("SWARM_TEST_PG_URL", PG_URL_DEFAULT)


def _on_test_postgres(statement: str) -> None:
    """Run ``statement`` (a CREATE or DROP DATABASE, which no transaction may hold) on the test
    PostgreSQL server."""
    import sqlalchemy as sa

    admin = sa.create_engine(_test_postgres_url(), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(statement)
    finally:
        admin.dispose()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The controller (or a run without xdist) stops the session's server, once no worker is
    left to use it; a worker leaves it to the others."""
    config = session.config
    if hasattr(config, "workerinput") or not hasattr(config, "_tmp_path_factory"):
        return
    try:
        state_file = _shared_root(config) / STATE
    except OSError:
        return
    if not state_file.is_file():
        return
    state = json.loads(state_file.read_text())
    state_file.unlink()
    pid = int(state["pid"])
    with suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGTERM)  # started in a session of its own: its group is its pid
    with suppress(Exception):  # a database left behind costs disk, not a result
        _drop_database(state.get("database"))


@pytest.fixture(scope="session")
def prefect_api_url(request: pytest.FixtureRequest) -> str:
    """The session's shared Prefect server, for a process a test starts (``PREFECT_API_URL``)."""
    return session_api_url(request.config)


@pytest.fixture(scope="session")
def prefect_harness(prefect_api_url: str) -> Iterator[None]:
    """Flows run in this process report to the session's shared server, as Prefect's own
    ``prefect_test_harness`` points them at its server (process-wide settings too, for code in
    a context copied before the fixture)."""
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    import prefect.context
    from prefect.logging.handlers import APILogWorker
    from prefect.settings import PREFECT_API_URL, temporary_settings
    from prefect.utilities.asyncutils import run_coro_as_sync

    from flows.local.env import prepare_prefect_env

    prepare_prefect_env()
    with ExitStack() as stack:
        stack.enter_context(temporary_settings(updates={PREFECT_API_URL: prefect_api_url}))
        stack.enter_context(
            prefect.context._temporary_global_settings_context(  # as the harness does
                prefect.context.get_settings_context()
            )
        )
        yield

        async def drain() -> None:
            # Logs and events still queued go out before the server is left to the others.
            from prefect.events.worker import EventsWorker

            try:
                pending: Any = APILogWorker.instance().drain()
                if inspect.isawaitable(pending):
                    await pending
            except RuntimeError:
                pass  # never started
            pending = EventsWorker.drain_all()
            if inspect.isawaitable(pending):
                await pending

        run_coro_as_sync(drain())
