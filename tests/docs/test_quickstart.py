"""docs/quickstart.md, walked as a person would: every ``sh`` block, in order, in one terminal.

The commands are read from the page itself, so the page cannot drift from the program. What the
test stands in for, and only that:

- ``uv``: the project's environment is already installed here, so ``uv run X`` runs X from it
  and ``uv sync`` does nothing (a shim first on PATH); ``make`` uses the real Makefile;
- ``RUN_ID`` and ``WORKER_ID``: ids a person copies from a table, read from the store;
- section 4's ``export SWARM_...=`` values: a real App's, replaced by the sandbox's values of the
  same names (the page may only export settings the sandbox has);
- Claude: the scripted model behind ``ANTHROPIC_BASE_URL`` (offline machine).

The blocks and their directives, and the terminal, are :mod:`tests.docs.terminal`'s.
"""

from __future__ import annotations

import re
import urllib.request
from pathlib import Path

import pytest

from tests.docs.terminal import READY, Terminal, blocks, terminal, with_sandbox_values
from tests.paths import ROOT

__all__ = ["terminal"]
PAGE = ROOT / "docs" / "quickstart.md"
# What the page promises a command prints (a command's text -> words its output holds).
PROMISES = {
    "uv run swarm run --repo acme/widgets --dry-run": ["3 new reviews would be posted"],
    "uv run swarm sandbox serve": ["sandbox GitHub at"],
    "uv run swarm memory list": ["Every bug fix comes with a regression test"],
    "uv run swarm exec --role reviewer --repo acme/widgets": ['"full_name": "acme/widgets"'],
}
SECOND_TIME = {
    "make demo": "0 new reviews posted, 6 already reviewed at this head SHA",
    "uv run swarm run --repo acme/widgets": "0 new reviews posted, 3 already reviewed",
}


def _ids(clone: Path) -> dict[str, str]:
    """A run id and a worker id from the demo's store, as a person copies them from a table."""
    from agents.store import Store

    store = Store.open(None, clone / ".swarm")
    try:
        found = [(r.id, store.list_workers(run_id=r.id)) for r in store.list_runs(limit=10)]
    finally:
        store.close()
    run_id, workers = next((run, workers) for run, workers in found if workers)
    return {"RUN_ID": run_id, "WORKER_ID": workers[0].id}


def _as_typed(command: str, clone: Path) -> str:
    """The command a person types here: placeholders filled, a real App's values swapped."""
    command = with_sandbox_values(command, clone)
    for placeholder in ("RUN_ID", "WORKER_ID"):
        if re.search(rf"\b{placeholder}\b", command):
            command = re.sub(rf"\b{placeholder}\b", _ids(clone)[placeholder], command)
    return command


def _check_promises(command: str, output: str, seen: set[str]) -> None:
    key = next((k for k in (*PROMISES, *SECOND_TIME) if command.startswith(k)), None)
    if key in SECOND_TIME and command.split("#")[0].strip() == key:
        if key in seen:
            assert SECOND_TIME[key] in output, output
        seen.add(key)
    for words in PROMISES.get(key or "", []):
        assert words in output, output


def _the_hint_runs_the_deployment(terminal: Terminal, log: Path) -> None:
    """The command ``swarm serve`` says runs its deployment now works as typed in another shell
    (no ``PREFECT_API_URL`` there: it said "the deployment does not exist" before)."""
    import time

    deadline = time.monotonic() + 120
    while "run it now, from another shell: " not in log.read_text():
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.5)
    hint = log.read_text().split("run it now, from another shell: ", 1)[1].splitlines()[0]
    assert "uv run prefect deployment run 'swarm-run/swarm-scheduled'" in hint
    assert "Created flow run" in terminal.run(hint), "\n".join(terminal.transcript[-2:])


def _review_links_open(output: str) -> None:
    links = re.findall(r"(http://127\.0\.0\.1:\d+/\S+?/pull/\d+)#pullrequestreview-(\d+)", output)
    assert links, output
    page, review = links[0]
    with urllib.request.urlopen(page, timeout=10) as reply:
        html = reply.read().decode()
    assert f"id='pullrequestreview-{review}'" in html


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_every_command_of_the_quickstart_works_against_the_sandbox(terminal: Terminal) -> None:
    page = blocks(PAGE.read_text(encoding="utf-8"))
    assert sum(len(b.commands) for b in page) >= 20, "the page lost its commands"
    seen: set[str] = set()
    posted_links = False
    for block in page:
        if block.directive.startswith("not run"):
            continue
        ready = READY.search(block.directive)
        for command in block.commands:
            typed = _as_typed(command, terminal.cwd)
            if ready:
                log = terminal.cwd.parent / f"background-{block.line}.log"
                output = terminal.start(typed, ready.group("text"), log)
                if typed.startswith("uv run swarm serve"):
                    _the_hint_runs_the_deployment(terminal, log)
            else:
                output = terminal.run(typed)
            _check_promises(typed, output, seen)
            if typed.split("#")[0].strip() == "uv run swarm run --repo acme/widgets" and (
                not posted_links
            ):
                _review_links_open(output)
                posted_links = True
    assert posted_links
    assert seen == set(SECOND_TIME)


def test_the_page_parses_into_the_blocks_a_person_sees() -> None:
    page = blocks(PAGE.read_text(encoding="utf-8"))
    first = page[0]
    assert first.commands == [
        "make demo     # one swarm over an offline GitHub, with a scripted model"
    ]
    directives = [b.directive for b in page if b.directive]
    assert all(d.startswith(("not run (", "background, ready at ")) for d in directives)
