"""``make demo`` from a fresh clone prints a Prefect UI link that shows its own run in a browser,
on a port other than 4200 and while another Prefect server holds 4200.

The local server used to be started with only ``--port``, so its UI asked port 4200 for its API:
"Can't connect to Server API at http://127.0.0.1:4200/api", or, with another Prefect server on
4200, that server's runs. The other server here is a real one, so a UI that talked to 4200 would
answer, quietly, with the wrong runs.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from flows.local.prefect_server import PREFERRED_PORT
from tests.browser import Browser
from tests.docs.terminal import Terminal, terminal
from tests.prefect_server import PrefectServer

__all__ = ["terminal"]
pytestmark = [pytest.mark.slow, pytest.mark.prefect]


@contextmanager
def another_prefect_server_on_4200(root: Path) -> Iterator[None]:
    """A Prefect server of someone else's on 4200; on a shared machine 4200 may be held
    already (by another person's server), which serves the test just as well."""
    if not _free(PREFERRED_PORT):
        yield
        return
    other = PrefectServer(root)
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


@pytest.mark.timeout(1200)
def test_make_demo_prints_a_ui_link_that_shows_its_run(
    terminal: Terminal, browser: Browser, tmp_path: Path
) -> None:
    with another_prefect_server_on_4200(tmp_path / "other-server"):
        output = terminal.run("make demo")
        found = re.search(r"Prefect UI: (http://127\.0\.0\.1:(\d+)/runs/flow-run/\S+)", output)
        assert found, output
        link, port = found.group(1), int(found.group(2))
        assert port != PREFERRED_PORT, output
        # The demo says where the UI's password is; a person pastes it once on the login page.
        where = re.search(r"asks once per browser for the password kept in (\S+)", output)
        assert where, output
        page = browser.page(link, password=Path(where.group(1)).read_text().strip())
        text = page.wait_for_text(
            ["swarm reviewer over acme/widgets, acme/gadgets, acme/docs", "Completed"],
            timeout=120,
        )
        assert "Can't connect" not in text
