"""docs/quickstart.md, walked as a person would: every ``sh`` block, in order, in one terminal.

The commands are read from the page itself, so the page cannot drift from the program. What the
test stands in for, and only that:

- ``uv``: the project's environment is already installed here, so ``uv run X`` runs X from it
  and ``uv sync`` does nothing (a shim first on PATH); ``make`` uses the real Makefile;
- ``RUN_ID`` and ``WORKER_ID``: ids a person copies from a table, read from the store;
- section 4's ``export SWARM_...=`` values: a real App's, replaced by the sandbox's values of the
  same names (the page may only export settings the sandbox has);
- Claude: the scripted model behind ``ANTHROPIC_BASE_URL`` (offline machine);
- someone else's Prefect server on port 4200 while the first ``make demo`` runs: a real one
  started here (:class:`tests.prefect_server.PrefectServer`), or whatever holds 4200 already;
- the person's browser: headless Chromium (:mod:`tests.browser`), which opens the first demo's
  Prefect UI link.

The page runs ``make demo`` twice in one clone, and each demo costs a Prefect server and a flow
run, so what a person sees in a demo's output is checked on these two, not on demos of its own:

- each demo's links point into its own sandbox GitHub (or its Prefect UI), which stops with the
  demo, and the demo says so: a second demo, with a fresh sandbox on another port and the same
  store, prints no link into the first one's;
- the first demo's Prefect UI link, opened in the browser with the password the demo says where
  to find, shows that run. The local server used to be started with only ``--port``, so its UI
  asked 4200 for its API: "Can't connect to Server API", or, with another Prefect server on
  4200, that server's runs. Hence a real server on 4200 during that demo: a UI that talked to
  4200 would answer, quietly, with the wrong runs.

The blocks and their directives, and the terminal, are :mod:`tests.docs.terminal`'s.
"""

from __future__ import annotations

import os
import re
import socket
import urllib.request
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from flows.local.prefect_server import PREFERRED_PORT
from tests.browser import Browser, chromium_path
from tests.docs.terminal import READY, Terminal, blocks, terminal, with_sandbox_values
from tests.paths import ROOT
from tests.prefect_fixtures import template_dir
from tests.prefect_server import PrefectServer

__all__ = ["terminal"]
PAGE = ROOT / "docs" / "quickstart.md"
LINK = re.compile(r"http://127\.0\.0\.1:(\d+)/\S*")
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


@contextmanager
def another_prefect_server_on_4200(root: Path, templates: Path | None) -> Iterator[None]:
    """A Prefect server of someone else's on 4200; on a shared machine 4200 may be held
    already (by another person's server), which serves the test just as well."""
    if not _free(PREFERRED_PORT):
        yield
        return
    other = PrefectServer(root, templates)  # from the migrated template: it only holds 4200
    other.port = PREFERRED_PORT
    try:
        other.start()
        yield
    finally:
        other.stop()


def _free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _browser(request: pytest.FixtureRequest) -> Browser | None:
    """The ``browser`` fixture, asked for only when the demo's link is to be opened; where
    Chromium is not installed (and not required) the rest of the walk-through still runs, with
    a warning, instead of the fixture skipping all of it."""
    if chromium_path() is None and os.environ.get("SWARM_TEST_REQUIRE_BROWSER") != "1":
        warnings.warn("chromium is not installed: the demo's Prefect UI link was not opened")
        return None
    browser = request.getfixturevalue("browser")
    assert isinstance(browser, Browser)
    return browser


def _the_ui_link_shows_its_run(output: str, request: pytest.FixtureRequest) -> None:
    """The demo's Prefect UI link is on a port of its own, not 4200, and shows its run."""
    found = re.search(r"Prefect UI: (http://127\.0\.0\.1:(\d+)/runs/flow-run/\S+)", output)
    assert found, output
    link, port = found.group(1), int(found.group(2))
    assert port != PREFERRED_PORT, output
    # The demo says where the UI's password is; a person pastes it once on the login page.
    where = re.search(r"asks once per browser for the password kept in (\S+)", output)
    assert where, output
    browser = _browser(request)
    if browser is None:
        return
    page = browser.page(link, password=Path(where.group(1)).read_text().strip())
    try:
        text = page.wait_for_text(
            ["swarm reviewer over acme/widgets, acme/gadgets, acme/docs", "Completed"],
            timeout=120,
        )
    finally:
        page.close()  # the walk-through goes on for minutes: an open UI page renders all along
    assert "Can't connect" not in text


def _links_die_with_the_demo(output: str) -> None:
    """The demo says its sandbox GitHub stopped with it, and links only into that sandbox and
    its Prefect UI: none into an earlier demo's sandbox (the store is the same)."""
    [sandbox] = re.findall(r"sandbox GitHub at http://127\.0\.0\.1:(\d+)", output)
    assert f"the sandbox GitHub (http://127.0.0.1:{sandbox}) stopped with the demo" in output
    prefect_ui = re.search(r"Prefect UI: http://127\.0\.0\.1:(\d+)", output)
    assert prefect_ui, output
    ports = {m.group(1) for m in LINK.finditer(output)}
    assert ports <= {sandbox, prefect_ui.group(1)}, output  # no link into another sandbox


def _make_demo(
    terminal: Terminal, typed: str, earlier: list[str], request: pytest.FixtureRequest
) -> str:
    """One of the page's ``make demo``s, and what its output must show (see the docstring)."""
    if earlier:
        output = terminal.run(typed)
    else:
        with another_prefect_server_on_4200(
            terminal.cwd.parent / "other-server", template_dir(request.config)
        ):
            output = terminal.run(typed)
            _the_ui_link_shows_its_run(output, request)
        assert "summary of acme/widgets#" in output and "(none in this demo" not in output
    _links_die_with_the_demo(output)
    return output


@pytest.mark.slow
@pytest.mark.prefect
@pytest.mark.timeout(2400)
def test_every_command_of_the_quickstart_works_against_the_sandbox(
    terminal: Terminal, request: pytest.FixtureRequest
) -> None:
    page = blocks(PAGE.read_text(encoding="utf-8"))
    assert sum(len(b.commands) for b in page) >= 20, "the page lost its commands"
    seen: set[str] = set()
    posted_links = False
    demos: list[str] = []
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
            elif typed.split("#")[0].strip() == "make demo":
                output = _make_demo(terminal, typed, demos, request)
                demos.append(output)
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
    assert len(demos) == 2, "the page no longer runs make demo twice"


def test_the_page_parses_into_the_blocks_a_person_sees() -> None:
    page = blocks(PAGE.read_text(encoding="utf-8"))
    first = page[0]
    assert first.commands == [
        "make demo     # one swarm over an offline GitHub, with a scripted model"
    ]
    directives = [b.directive for b in page if b.directive]
    assert all(d.startswith(("not run (", "background, ready at ")) for d in directives)
