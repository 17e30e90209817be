"""The migrations build exactly the tables ``agents.store.schema`` declares, on both backends,
and upgrading an existing database keeps what it holds."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command

from agents.store import GitHubCall, NewEvent, NewWorker, Store
from agents.store.engine import Database, make_engine
from agents.store.migrate import alembic_config, current_revision, head_revision, schema_drift
from tests.store.backends import StoreTarget, fresh_pg_schema


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreTarget]:
    """A database nobody has migrated yet."""
    if request.param == "sqlite":
        yield StoreTarget("sqlite", None, tmp_path / "data")
        return
    with fresh_pg_schema(request.getfixturevalue("pg_url")) as url:
        yield StoreTarget("postgresql", url, tmp_path / "data")


def _database(target: StoreTarget) -> Database:
    return Database(make_engine(target.url, target.data_dir))


def _migrate(db: Database, direction: str, revision: str) -> None:
    cfg = alembic_config()
    with db.write() as conn:
        cfg.attributes["connection"] = conn
        getattr(command, direction)(cfg, revision)


def test_the_migrated_schema_is_exactly_the_declared_tables(store: Store) -> None:
    assert schema_drift(store._db) == []


def test_a_difference_between_database_and_tables_is_reported(empty_target: StoreTarget) -> None:
    with empty_target.open() as store:
        with store._db.write() as conn:
            conn.exec_driver_sql("ALTER TABLE agent_notes ADD COLUMN stray INTEGER")
        drift = schema_drift(store._db)
    assert [(d[0], d[2], d[3].name) for d in drift] == [("remove_column", "agent_notes", "stray")]


def _legacy_throttle_table(db: Database) -> None:
    # What versions before 0002 created with create_all, outside the migrations.
    legacy = sa.Table(
        "swarm_throttle_state",
        sa.MetaData(),
        sa.Column("identity", sa.String(255), primary_key=True),
        sa.Column("state", sa.Text, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )
    legacy.create(db.engine)
    with db.write() as conn:
        conn.execute(
            legacy.insert().values(
                identity="reviewer[bot]", state=json.dumps({"paused_until": 5.0}), updated_at=1.0
            )
        )


def _read_back(store: Store, run_id: str, worker_id: str) -> tuple[object, ...]:
    return store.get_run(run_id), store.get_worker(worker_id), store.get_transcript(worker_id)


@pytest.mark.parametrize("legacy_table", [False, True], ids=["plain", "with-legacy-throttle-table"])
def test_upgrading_a_0001_database_keeps_its_rows(
    empty_target: StoreTarget, legacy_table: bool
) -> None:
    db = _database(empty_target)
    _migrate(db, "upgrade", "0001")
    if legacy_table:
        _legacy_throttle_table(db)
    old = Store(db)  # the tables of 0001 are all the store's older parts need
    run_id = old.create_run("schedule", totals={"prs": 2})
    worker_id = old.create_worker(NewWorker(run_id, role_chain=["reviewer"], status="running"))
    old.append_events(worker_id, [NewEvent("user_turn", "review PR 4"), NewEvent("status", "ok")])
    with db.write() as conn:  # the 0001 memories table, as its code wrote it
        conn.exec_driver_sql(
            "INSERT INTO memories (kind, body, author, author_kind, created_at) "
            "VALUES ('fact', 'CI runs on Python 3.11', 'maintainer', 'person', "
            "'2026-11-30 10:00:00')"
        )
    old.record_github_call(
        GitHubCall(identity="reviewer[bot]", worker_id=worker_id, method="POST", route="/x")
    )
    before = _read_back(old, run_id, worker_id)
    old.close()

    with empty_target.open() as store:
        assert current_revision(store._db) == head_revision()
        assert _read_back(store, run_id, worker_id) == before
        (memory,) = store.list_memories()
        assert (memory.body, memory.author, memory.state) == (
            "CI runs on Python 3.11",
            "maintainer",
            "active",
        )
        assert len(store.audit("reviewer[bot]")) == 1
        kept = store.transact_state("reviewer[bot]", lambda doc: (doc, doc))
        assert kept == ({"paused_until": 5.0} if legacy_table else {})
        assert schema_drift(store._db) == []


def test_downgrading_to_0001_and_upgrading_again_round_trips(tmp_path: Path) -> None:
    target = StoreTarget("sqlite", None, tmp_path / "data")
    target.open().close()
    db = _database(target)
    _migrate(db, "downgrade", "0001")
    assert not sa.inspect(db.engine).has_table("swarm_throttle_state")
    db.dispose()
    with target.open() as store:
        assert store.transact_state("a[bot]", lambda doc: (None, {"n": 1})) is None
        assert schema_drift(store._db) == []


def test_upgrading_gives_paused_and_skipped_workers_their_own_words_back(
    empty_target: StoreTarget,
) -> None:
    """Before 0005 a paused worker was stored failed and a skipped one succeeded; its last
    status event kept the outcome's own word, and the upgrade reads it back from there."""
    db = _database(empty_target)
    _migrate(db, "upgrade", "0004")
    old = Store(db)
    run_id = old.create_run("schedule")

    def ended(stored: str, *said: str) -> str:
        worker_id = old.create_worker(NewWorker(run_id, role_chain=["reviewer"], status="running"))
        events = [NewEvent("status", {"status": word, "reason": ""}) for word in said]
        old.append_events(worker_id, [NewEvent("user_turn", "review PR 4"), *events])
        old.finish_worker(worker_id, stored, blocked_reason="why")
        return worker_id

    expected = {
        ended("failed", "verified", "paused"): "paused",
        ended("succeeded", "verified", "skipped"): "skipped",
        ended("failed", "verified", "failed"): "failed",
        ended("succeeded", "verified", "succeeded"): "succeeded",
        ended("blocked", "blocked"): "blocked",
        # A paused worker found stale afterwards: its last word is the recovery's failed.
        ended("failed", "paused", "failed"): "failed",
        ended("failed"): "failed",  # no status event: nothing to read back
        ended("succeeded", "paused"): "succeeded",  # a word that never meant this row's
    }
    old.close()

    with empty_target.open() as store:
        assert {w: store.get_worker(w).status for w in expected} == expected
        assert {store.get_worker(w).blocked_reason for w in expected} == {"why"}
    _migrate(db, "downgrade", "0004")
    coarse = {"paused": "failed", "skipped": "succeeded"}
    with db.read() as conn:
        rows = {w: s for w, s in conn.execute(sa.text("SELECT id, status FROM workers"))}
    assert rows == {w: coarse.get(s, s) for w, s in expected.items()}
    db.dispose()
