"""``swarm store copy``: moving a store to another database keeps everything a later run reads to
skip work already done, so nothing is paid twice; bad targets are refused in one line.

The source is the configured store (SQLite under SWARM_DATA_DIR, as a first install has it);
the target is a new SQLite file or a new PostgreSQL schema, reached with a password in its URL
that no output may show (PostgreSQL's trust auth here ignores it)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from agents.memory_origin import MemoryOrigin
from agents.planning.sources import StoreLedger
from agents.posting.keys import review_key
from agents.store import GitHubCall, NewDelivery, NewEvent, NewWorker, Store
from agents.store.copy import BATCH_ROWS
from agents.store.schema import memories, metadata
from tests.cli.conftest import EXIT_USAGE, assert_error, swarm
from tests.store.backends import fresh_pg_schema

PASSWORD = "pw-NEVER-SHOWN-4711"
REPO = "acme/widgets"
POSTED = review_key(REPO, 1, "a" * 40, "reviewer")
POSTED_SUMMARY = review_key(REPO, 2, "b" * 40, "summarizer")
CLAIMED = review_key(REPO, 3, "c" * 40, "reviewer")
# More transcript events than one batch holds: the copy streams them in several.
EVENTS = BATCH_ROWS + 37
SQL_NULL = "<SQL NULL>"


@pytest.fixture(params=["sqlite", "postgresql"])
def new_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database for the copy: a SQLite file not made yet, or a new PostgreSQL schema."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'new' / 'swarm.db'}"
        return
    with fresh_pg_schema(request.getfixturevalue("pg_url")) as url:
        yield sa.make_url(url).set(password=PASSWORD).render_as_string(hide_password=False)


@pytest.fixture
def old_store(clean_env: Path) -> str:
    """The configured SQLite store, holding a run whose worker posted two reviews and claimed a
    third, its transcript, an LLM and a GitHub call, memories and a webhook delivery."""
    data_dir = clean_env / "data"
    with Store.open(None, data_dir) as store:
        run = store.create_run("test")
        worker = store.create_worker(NewWorker(run, role_chain=["reviewer"], status="running"))
        for key, number in ((POSTED, 11), (POSTED_SUMMARY, 12)):
            assert store.claim_review_key(key, worker)
            store.mark_review_posted(key, number, f"https://github.test/{REPO}/pull/{number}")
        assert store.claim_review_key(CLAIMED, worker)
        store.append_events(
            worker,
            [
                NewEvent("assistant_turn", {"text": f"finding {n} in parser.py"})
                for n in range(EVENTS)
            ],
        )
        store.record_github_call(
            GitHubCall(identity="bot", worker_id=worker, method="POST", route="/x", status=201)
        )
        store.add_memory("fact", "the parser is strict", author="maintainer", repo=REPO)
        store.add_memory("fact", "written before sources were kept", author="maintainer")
        store.add_memory(
            "fact",
            "learnt",
            author="bot",
            origin=MemoryOrigin(source={"comment": 7, "reply": None}),
        )
        store.record_delivery(
            NewDelivery(
                delivery_id="d-1", body_sha256="f" * 64, event="pull_request", work={"n": 1}
            )
        )
        store.record_delivery(NewDelivery(delivery_id="d-2", body_sha256="e" * 64, event="ping"))
    # A memory written before the source column existed holds SQL NULL there, where the store
    # writes JSON null today: the copy must keep each as it is.
    engine = sa.create_engine(f"sqlite:///{data_dir / 'swarm.db'}")
    with engine.begin() as conn:
        conn.execute(sa.update(memories).where(memories.c.id == 2).values(source=sa.null()))
    engine.dispose()
    return f"sqlite:///{data_dir / 'swarm.db'}"


def dump(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table in id order; a JSON column as its parsed JSON, or SQL_NULL."""
    engine = sa.create_engine(url)
    found: dict[str, list[tuple[Any, ...]]] = {}
    try:
        with engine.connect() as conn:
            for table in metadata.sorted_tables:
                json_columns = {c.name for c in table.columns if isinstance(c.type, sa.JSON)}
                read = sa.select(
                    *(sa.cast(c, sa.Text) if c.name in json_columns else c for c in table.columns)
                ).order_by(*table.primary_key.columns)
                found[table.name] = [
                    tuple(
                        (SQL_NULL if v is None else json.loads(v)) if c.name in json_columns else v
                        for c, v in zip(table.columns, row, strict=True)
                    )
                    for row in conn.execute(read)
                ]
    finally:
        engine.dispose()
    return found


def test_the_copy_holds_every_row_of_the_store_as_it_was(old_store: str, new_store: str) -> None:
    seen = swarm("store", "copy", "--to", new_store)
    assert seen.code == 0, seen.output
    assert PASSWORD not in seen.output
    before, after = dump(old_store), dump(new_store)
    assert after == before
    assert len(after["transcript_events"]) == EVENTS
    assert "transcript_events" in seen.output and str(EVENTS) in seen.output
    assert seen.lines[-1].startswith(f"copied {sum(map(len, before.values()))} row(s) in 13 tables")


def test_json_null_and_sql_null_stay_apart_in_the_copy(old_store: str, new_store: str) -> None:
    assert swarm("store", "copy", "--to", new_store).code == 0
    column = memories.c.source
    engine = sa.create_engine(new_store)
    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(memories.c.id, column.is_(None), column).order_by(memories.c.id)
        ).all()
    engine.dispose()
    # Read through the JSON type both nulls are None: only IS NULL tells them apart.
    assert [(r[0], r[1], r[2]) for r in rows] == [
        (1, False, None),
        (2, True, None),
        (3, False, {"comment": 7, "reply": None}),
    ]


def test_a_run_over_the_copy_finds_every_review_done_and_every_claim_taken(
    old_store: str, new_store: str
) -> None:
    """What decides that a run starts no worker for a pull request: discovery's ledger (a review
    posted at this head, the last reviewed head) and the claim a worker must win to post."""
    assert swarm("store", "copy", "--to", new_store).code == 0
    with Store.open(old_store) as old, Store.open(new_store) as new:
        ledgers = StoreLedger(old), StoreLedger(new)
        for key in (POSTED, POSTED_SUMMARY, CLAIMED, review_key(REPO, 4, "d" * 40, "reviewer")):
            assert ledgers[1].has_review(key) == ledgers[0].has_review(key)
            assert ledgers[1].agrees(key) == ledgers[0].agrees(key)
        for number in (1, 2, 3):
            roles = ["reviewer", "summarizer"]
            assert ledgers[1].last_reviewed_sha(REPO, number, roles) == (
                ledgers[0].last_reviewed_sha(REPO, number, roles)
            )
        assert ledgers[1].has_review(POSTED) and ledgers[1].has_review(POSTED_SUMMARY)
        run = new.create_run("after the move")
        worker = new.create_worker(NewWorker(run, role_chain=["reviewer"], status="running"))
        # A worker of a later run cannot take over what the old store's worker posted or holds.
        for key in (POSTED, POSTED_SUMMARY, CLAIMED):
            assert not new.claim_review_key(key, worker)
        # And the copied transcript is searchable where it now lives.
        assert new.search_events(query="parser", run_id=new.list_runs(limit=5)[-1].id)


def test_rows_written_after_the_copy_get_fresh_ids(old_store: str, new_store: str) -> None:
    assert swarm("store", "copy", "--to", new_store).code == 0
    with Store.open(new_store) as new:
        memory = new.add_memory("fact", "written after the move", author="maintainer")
        worker = new.list_workers(run_id=new.list_runs(limit=1)[0].id)[0].id
        new.record_github_call(
            GitHubCall(identity="bot", worker_id=worker, method="GET", route="/y")
        )
    assert memory.id == 4
    assert [row[0] for row in dump(new_store)["github_calls"]] == [1, 2]


def test_a_dry_run_counts_the_rows_and_writes_nothing(old_store: str, new_store: str) -> None:
    seen = swarm("store", "copy", "--to", new_store, "--dry-run")
    assert seen.code == 0, seen.output
    assert PASSWORD not in seen.output
    total = sum(map(len, dump(old_store).values()))
    assert seen.lines[-1].startswith(f"would copy {total} row(s) in 13 tables")
    assert seen.lines[-1].endswith("nothing written: drop --dry-run to copy")
    url = sa.make_url(new_store)
    if url.get_backend_name() == "sqlite":
        assert not Path(url.database or "").parent.exists()
        return
    engine = sa.create_engine(new_store)
    with engine.connect() as conn:
        assert sa.inspect(conn).get_table_names() == []
    engine.dispose()


def test_a_target_holding_a_store_is_refused_and_left_as_it_was(
    old_store: str, new_store: str
) -> None:
    assert swarm("store", "copy", "--to", new_store).code == 0
    with Store.open(new_store) as new:
        new.add_memory("fact", "written after the move", author="maintainer")
    held = dump(new_store)
    for extra in ([], ["--dry-run"]):
        seen = swarm("store", "copy", "--to", new_store, *extra)
        shown = new_store.removeprefix("sqlite:///").replace(f":{PASSWORD}@", "@")
        assert_error(
            seen,
            f"error: --to already holds a store ({sum(map(len, held.values()))} row(s) in 8 "
            f"table(s), {shown}); swarm store copy only fills an empty database, so nothing "
            "was copied",
            EXIT_USAGE,
            secrets=[PASSWORD],
        )
        assert dump(new_store) == held


def test_a_store_is_not_copied_onto_itself(old_store: str) -> None:
    path = old_store.removeprefix("sqlite:///")
    seen = swarm("store", "copy", "--to", f"sqlite:///{Path(path).parent}/../data/swarm.db")
    assert_error(
        seen,
        f"error: --to names the store being copied ({path}); give the new, empty database",
        EXIT_USAGE,
    )


def test_a_store_copied_to_postgresql_and_back_is_the_same(
    old_store: str, pg_url: str, tmp_path: Path
) -> None:
    back = f"sqlite:///{tmp_path / 'back' / 'swarm.db'}"
    with fresh_pg_schema(pg_url) as between:
        assert swarm("store", "copy", "--to", between).code == 0
        seen = swarm("store", "copy", "--from", between, "--to", back)
        assert seen.code == 0, seen.output
    assert dump(back) == dump(old_store)


@pytest.mark.parametrize(
    ("to", "first_line"),
    [
        (
            "postgresql+psycopg://swarm:pw-NEVER-SHOWN-4711@127.0.0.1:no-port/x",
            "error: --to is not a database URL (expected postgresql+psycopg://USER@HOST/DB or "
            "sqlite:////PATH/swarm.db; the value is not shown, it may hold a password)",
        ),
        (
            "mysql://swarm:pw-NEVER-SHOWN-4711@db/swarm",
            "error: --to backend 'mysql' is not supported; use sqlite:/// or postgresql+psycopg://",
        ),
    ],
    ids=["bad port", "unsupported backend"],
)
def test_a_bad_target_url_is_one_line(old_store: str, to: str, first_line: str) -> None:
    assert_error(swarm("store", "copy", "--to", to), first_line, EXIT_USAGE, secrets=[PASSWORD])


def test_an_unreachable_target_is_one_line_without_its_password(old_store: str) -> None:
    # Port 9 (discard) on this host: nothing listens, the connection is refused at once.
    seen = swarm("store", "copy", "--to", f"postgresql+psycopg://swarm:{PASSWORD}@127.0.0.1:9/x")
    assert seen.code == EXIT_USAGE, seen.output
    assert seen.first_line.startswith(
        "error: cannot open the store --to names (postgresql+psycopg://swarm@127.0.0.1:9/x): "
    ), seen.output
    assert_error(seen, seen.first_line, EXIT_USAGE, secrets=[PASSWORD])


def test_a_source_store_that_is_not_there_is_refused_not_made(
    new_store: str, tmp_path: Path
) -> None:
    missing = tmp_path / "none" / "swarm.db"
    seen = swarm("store", "copy", "--from", f"sqlite:///{missing}", "--to", new_store)
    assert_error(seen, f"error: --from names no store: {missing} does not exist", EXIT_USAGE)
    assert not missing.parent.exists()


def test_a_row_the_target_refuses_leaves_it_without_a_store(old_store: str, pg_url: str) -> None:
    # SQLite keeps a value longer than its column says; PostgreSQL refuses it. The copy has
    # filled several tables when it reaches this row: all of it, the schema too, is undone.
    too_long = "status-" + "x" * 40
    engine = sa.create_engine(old_store)
    with engine.begin() as conn:
        conn.exec_driver_sql("UPDATE workers SET status = ?", (too_long,))
    engine.dispose()
    with fresh_pg_schema(pg_url) as new_store:
        seen = swarm("store", "copy", "--to", new_store)
        assert_error(
            seen,
            "error: the target refused a row of workers (value too long for type character "
            "varying(32)); nothing was copied",
            EXIT_USAGE,
            secrets=[too_long],
        )
        engine = sa.create_engine(new_store)
        with engine.connect() as conn:
            assert sa.inspect(conn).get_table_names() == []
        engine.dispose()
