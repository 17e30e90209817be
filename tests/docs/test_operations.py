"""docs/operations.md's commands run as written: every command goes through ``uv run`` (a bare
``swarm`` is "command not found" in a fresh clone), and ``swarm verify`` answers against the
sandbox's Apps as the page promises. The blocks that need GitHub, a browser download or a
notification service say so, and what runs them instead. No Prefect server: this test is cheap.
"""

from __future__ import annotations

import re
import shlex

from agents.posting.keys import review_key
from agents.store import NewWorker, Store
from tests.docs.terminal import READY, Terminal, blocks, terminal
from tests.paths import ROOT
from tests.store.backends import fresh_pg_schema

__all__ = ["terminal"]
PAGE = ROOT / "docs" / "operations.md"
# The project's programs live in its environment, not on PATH.
PROJECT_PROGRAMS = re.compile(r"^(?:[A-Z_]+=\S+ )*(swarm|prefect|python|pytest)\b")
# The reader's new database in "Moving the store"; the test puts its own in its place.
EXAMPLE_STORE_URL = "postgresql+psycopg://swarm@db.internal:5432/swarm"


def test_every_command_goes_through_uv_run_and_every_block_not_run_says_why() -> None:
    page = blocks(PAGE.read_text(encoding="utf-8"))
    assert len(page) >= 5, page
    for block in page:
        if block.directive:
            assert block.directive.startswith(("not run (", "background, ready at ")), block
        for command in block.commands:
            assert not PROJECT_PROGRAMS.match(command), command
    prose = re.findall(r"`((?:swarm|prefect) [^`]*)`", PAGE.read_text(encoding="utf-8"))
    instructions = [c for c in prose if re.match(r"swarm (transcript|verify|audit|store)", c)]
    assert not instructions, instructions  # a command to type, written without `uv run`


def test_verify_runs_as_written_against_the_sandbox(terminal: Terminal) -> None:
    terminal.start(
        "uv run swarm sandbox serve", "sandbox GitHub at", terminal.cwd.parent / "sandbox.log"
    )
    terminal.run("set -a; . .swarm/sandbox/sandbox.env; set +a")
    ran = 0
    for block in blocks(PAGE.read_text(encoding="utf-8")):
        if block.directive.startswith("not run") or READY.search(block.directive):
            continue
        for command in block.commands:
            output = terminal.run(command)
            ran += 1
            if command.startswith("uv run swarm verify"):
                assert "swarm-reviewer[bot]" in output, output
    assert ran >= 1


def test_moving_the_store_runs_as_written(terminal: Terminal, pg_url: str) -> None:
    """The "Moving the store" lines, with a new PostgreSQL schema where the page has the
    reader's own database: the copy is counted, made, and read back through SWARM_STORE_URL."""
    section = PAGE.read_text(encoding="utf-8").split("## 10. Moving the store", 1)[1]
    (block,) = [b for b in blocks(section) if any("store copy" in c for c in b.commands)]
    with Store.open(None, terminal.cwd / ".swarm") as store:
        run = store.create_run("before the move")
        worker = store.create_worker(NewWorker(run, role_chain=["reviewer"], status="succeeded"))
        store.claim_review_key(review_key("acme/widgets", 1, "a" * 40, "reviewer"), worker)
    with fresh_pg_schema(pg_url) as new_store:
        outputs = [
            terminal.run(command.replace(EXAMPLE_STORE_URL, shlex.quote(new_store)))
            for command in block.commands
        ]
    assert [c.split(" --")[0] for c in block.commands[:2]] == ["uv run swarm store copy"] * 2
    assert "would copy 3 row(s) in 13 tables" in outputs[0], outputs[0]
    assert "copied 3 row(s) in 13 tables" in outputs[1], outputs[1]
    assert run in outputs[3], outputs[3]
