"""Opening the store: URLs, migrations at open, and the standalone alembic command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from agents.store import Store, StoreConfigError
from agents.store.migrate import current_revision, head_revision
from tests.paths import ROOT
from tests.store.backends import StoreTarget


def test_open_migrates_to_head_and_reopening_is_a_no_op(store_target: StoreTarget) -> None:
    with store_target.open() as store:
        assert current_revision(store._db) == head_revision()
        run_id = store.create_run("manual")
    with store_target.open() as again:
        assert again.get_run(run_id).trigger == "manual"


def test_default_store_is_a_wal_sqlite_file_under_the_data_dir(tmp_path: Path) -> None:
    with Store.open(None, tmp_path / "d") as store:
        assert (tmp_path / "d" / "swarm.db").exists()
        with store._db.read() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 60000


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "mysql://u:hunter2@db/x",
            "SWARM_STORE_URL backend 'mysql' is not supported; use sqlite:/// or "
            "postgresql+psycopg://",
        ),
        (
            "sqlite://",
            "SWARM_STORE_URL points at an in-memory SQLite database; the store must be a file "
            "shared by every worker process",
        ),
        (
            "not a url",
            "SWARM_STORE_URL is not a database URL (expected postgresql+psycopg://USER@HOST/DB "
            "or sqlite:////PATH/swarm.db; the value is not shown, it may hold a password)",
        ),
    ],
)
def test_unusable_urls_are_refused_with_a_message_naming_the_setting(
    url: str, message: str, tmp_path: Path
) -> None:
    with pytest.raises(StoreConfigError) as err:
        Store.open(url, tmp_path)
    assert str(err.value) == message
    assert "hunter2" not in str(err.value)


def test_alembic_command_line_upgrades_a_fresh_database(tmp_path: Path) -> None:
    env = {**os.environ, "SWARM_STORE_URL": f"sqlite:///{tmp_path / 'cli.db'}"}
    subprocess.run(
        [sys.executable, "-m", "alembic", "-c", "agents/store/alembic.ini", "upgrade", "head"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    engine = sa.create_engine(env["SWARM_STORE_URL"])
    with engine.connect() as conn:
        tables = set(sa.inspect(conn).get_table_names())
        version = conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()
    engine.dispose()
    assert {"swarm_runs", "workers", "transcript_events", "memories", "transcript_fts"} <= tables
    assert version == head_revision()
