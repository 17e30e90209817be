"""A new data directory's local Prefect server starts from the migrated database the first server
of this Prefect version kept in the user's cache, and only from a copy that cannot be wrong."""

from __future__ import annotations

import json
import os
import sqlite3
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from flows.local import server_template
from flows.local.prefect_server import (
    auth_header,
    auth_string,
    ensure_running,
    prefect_home,
    stop,
)

# What a server that has only started holds: Prefect's schema version and its block types.
PREFECTS_OWN = {"alembic_version", "block_type", "block_schema", "block_schema_reference"}


def _environ_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    pairs = (item.decode(errors="replace").partition("=") for item in raw if item)
    return {key: value for key, _, value in pairs}


def _tables_with_rows(database: Path) -> set[str]:
    with sqlite3.connect(database) as found:
        names = [
            row[0] for row in found.execute("SELECT name FROM sqlite_master WHERE type='table'")
        ]
        return {name for name in names if found.execute(f'SELECT 1 FROM "{name}"').fetchone()}


def _schema_head(database: Path) -> str:
    with sqlite3.connect(database) as found:
        return str(found.execute("SELECT version_num FROM alembic_version").fetchone()[0])


def _post(api_url: str, path: str, body: object, home: Path) -> Any:
    asked = urllib.request.Request(
        f"{api_url}{path}",
        data=json.dumps(body).encode(),
        headers={**auth_header(auth_string(home)), "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(asked, timeout=30) as reply:
        return json.loads(reply.read())


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for key in list(os.environ):
        if key.startswith(("PREFECT_SERVER_DATABASE_", "PREFECT_API_DATABASE_")):
            monkeypatch.delenv(key)
    template = server_template.template_path(os.environ)
    assert template is not None
    return template


@pytest.mark.slow
def test_a_second_data_directorys_server_starts_from_the_first_ones_migrated_database(
    tmp_path: Path, cache: Path
) -> None:
    first = prefect_home(tmp_path / "first")
    server, started = ensure_running(first)
    try:
        assert started
        # Kept as the server first answered: Prefect's own tables, nothing of a run.
        assert cache.is_file()
        assert _tables_with_rows(cache) <= PREFECTS_OWN
        assert (cache.stat().st_mode & 0o077) == 0
        assert "PREFECT_SERVER_DATABASE_MIGRATE_ON_START" not in _environ_of(server.pid)
    finally:
        stop(first)
    kept = cache.stat().st_mtime_ns

    second = prefect_home(tmp_path / "second")
    server, started = ensure_running(second)
    try:
        assert started
        env = _environ_of(server.pid)
        assert env["PREFECT_SERVER_DATABASE_MIGRATE_ON_START"] == "false"
        assert env["PREFECT_SERVER_REGISTER_BLOCKS_ON_START"] == "false"
        assert _schema_head(second / "prefect.db") == _schema_head(cache)
        # The server started from the copy serves what needs its tables.
        assert _post(server.api_url, "/block_types/filter", {}, second)
        assert _post(server.api_url, "/flows/", {"name": "from-the-copy"}, second)["id"]
    finally:
        stop(second)
    assert cache.stat().st_mtime_ns == kept, "a copy kept already is not written again"


def test_a_kept_database_others_may_write_or_a_link_is_not_copied(
    tmp_path: Path, cache: Path
) -> None:
    good = tmp_path / "good.db"
    with sqlite3.connect(good) as made:
        made.execute("CREATE TABLE alembic_version (version_num TEXT)")
        made.execute("INSERT INTO alembic_version VALUES ('head')")
    cache.parent.mkdir(parents=True)
    cache.write_bytes(good.read_bytes())
    home = tmp_path / "home"
    home.mkdir()

    cache.chmod(0o666)
    assert server_template.seed(home, cache, os.environ) == {}
    assert not (home / "prefect.db").exists()

    cache.unlink()
    cache.symlink_to(good)
    assert server_template.seed(home, cache, os.environ) == {}
    assert not (home / "prefect.db").exists()

    cache.unlink()
    cache.write_bytes(good.read_bytes())
    cache.chmod(0o600)
    assert server_template.seed(home, cache, os.environ) == server_template.FROM_COPY
    assert _schema_head(home / "prefect.db") == "head"


def test_a_database_of_its_own_or_a_configured_one_is_never_replaced(
    tmp_path: Path, cache: Path
) -> None:
    cache.parent.mkdir(parents=True)
    with sqlite3.connect(cache) as made:
        made.execute("CREATE TABLE alembic_version (version_num TEXT)")
        made.execute("INSERT INTO alembic_version VALUES ('head')")
    home = tmp_path / "home"
    home.mkdir()
    (home / "prefect.db-wal").write_bytes(b"a journal of a database being written")
    assert server_template.seed(home, cache, os.environ) == {}
    assert not (home / "prefect.db").exists()

    (home / "prefect.db-wal").unlink()
    postgres = {"PREFECT_API_DATABASE_CONNECTION_URL": "postgresql+asyncpg://db/prefect"}
    assert server_template.seed(home, cache, postgres) == {}
    assert not (home / "prefect.db").exists()


@pytest.mark.slow
def test_a_kept_copy_that_is_not_a_migrated_database_is_replaced_by_a_fresh_start(
    tmp_path: Path, cache: Path
) -> None:
    cache.parent.mkdir(parents=True)
    cache.write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)  # torn: a header and nothing
    cache.chmod(0o600)
    home = prefect_home(tmp_path / "data")
    server, started = ensure_running(home)
    try:
        assert started
        assert "PREFECT_SERVER_DATABASE_MIGRATE_ON_START" not in _environ_of(server.pid)
        assert _schema_head(home / "prefect.db")
        assert _schema_head(cache) == _schema_head(home / "prefect.db")
    finally:
        stop(home)
