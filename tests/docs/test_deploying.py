"""docs/deploying.md's commands that need only a Prefect server, run as written against a real one:
the work pool, ``prefect deploy --all`` with the shipped ``prefect.yaml``, a worker, the
heartbeat setting and the shipped automations. The blocks that need Prefect Cloud or machines of
one's own are marked, with what runs them instead.

What stands in: ``PREFECT_API_URL`` names the test's server (the page sets it with ``prefect
config set``, on machines the test does not have), and the fresh clone holds ``prefect.yaml`` and
``automations/`` as a checkout does.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.docs.terminal import READY, Terminal, blocks, terminal
from tests.paths import ROOT
from tests.prefect_fixtures import template_dir
from tests.prefect_server import PrefectServer

__all__ = ["terminal"]
PAGE = ROOT / "docs" / "deploying.md"
pytestmark = [pytest.mark.slow, pytest.mark.prefect]


@pytest.fixture
def server(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[PrefectServer]:
    found = PrefectServer(tmp_path / "prefect", template_dir(request.config)).start()
    try:
        yield found
    finally:
        found.stop()


@pytest.mark.timeout(1200)
def test_the_work_pool_section_runs_as_written(terminal: Terminal, server: PrefectServer) -> None:
    for shipped in ("prefect.yaml", "automations"):
        (terminal.cwd / shipped).symlink_to(ROOT / shipped)
    terminal.env |= {"PREFECT_API_URL": server.api_url, "PREFECT_HOME": str(terminal.cwd.parent)}
    page = [
        b for b in blocks(PAGE.read_text(encoding="utf-8")) if not b.directive.startswith("not run")
    ]
    assert sum(len(b.commands) for b in page) >= 5, page
    for block in page:
        ready = READY.search(block.directive)
        for command in block.commands:
            if ready:
                log = terminal.cwd.parent / f"background-{block.line}.log"
                terminal.start(command, ready.group("text"), log)
            else:
                terminal.run(command)
    for name in ("review-open-prs", "security-review"):
        assert server.api("GET", f"/deployments/name/swarm-run/{name}")["work_pool_name"] == (
            "swarm-process"
        )
    workers = server.api("POST", "/work_pools/swarm-process/workers/filter", {})
    assert workers, "the worker never registered with its pool"
    automations = server.api("POST", "/automations/filter", {})
    assert len(automations) == 2


def test_every_block_the_test_does_not_run_says_why() -> None:
    for block in blocks(PAGE.read_text(encoding="utf-8")):
        if block.directive:
            assert block.directive.startswith(("not run (", "background, ready at ")), block
        for command in block.commands:
            # Prefect lives in the project's environment: a bare `prefect` is "command not found".
            assert not command.startswith("prefect "), command
