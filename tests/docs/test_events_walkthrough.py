"""docs/events.md's offline walk-through, run as a person runs it: the sandbox delivers signed
webhooks to ``swarm webhook serve``, a maintainer's ``/swarm review`` comment gets a review and
a new issue gets triaged, all through the page's own ``sh`` blocks, in order.

The machinery is the quickstart doc test's (one shell whose environment carries over, servers
started in the background until they print their ready line, the ``uv`` shim, the scripted model
behind ``ANTHROPIC_BASE_URL``). What this test adds: ``<!-- doc-test: retry for N s until "TEXT"
-->`` runs a command again until its output holds TEXT (a person looking again a moment later),
and the receiver's port 8787 is swapped for a free one so the test never meets another server.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from tests.docs.terminal import READY, Block, Terminal, blocks, terminal
from tests.paths import ROOT

PAGE = ROOT / "docs" / "events.md"
RETRY = r'retry for (?P<seconds>\d+) s until "(?P<text>[^"]+)"'
PORT = "8787"
__all__ = ["terminal"]


def _free_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return str(sock.getsockname()[1])


def _retry(shell: Terminal, command: str, text: str, seconds: float) -> str:
    deadline = time.monotonic() + seconds
    while True:
        try:
            output = shell.run(command)
        except AssertionError:  # grep found nothing yet
            output = ""
        if text in output:
            return output
        assert time.monotonic() < deadline, "\n".join(shell.transcript[-3:])
        time.sleep(2)


def _one_pr_runs() -> list[Block]:
    page = PAGE.read_text(encoding="utf-8")
    section = page[page.index("## One-PR runs") : page.index("## Trying it offline")]
    found = blocks(section)
    assert [len(b.commands) for b in found] == [3], found
    return found


def _walkthrough() -> list[Block]:
    page = PAGE.read_text(encoding="utf-8")
    start = page.index("## Trying it offline")
    return blocks(page[start:])


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_the_events_walkthrough_reviews_on_command_and_triages_a_new_issue(
    terminal: Terminal,
) -> None:
    import re

    port = _free_port()
    page = _walkthrough()
    assert sum(len(b.commands) for b in page) >= 8, "the walk-through lost its commands"
    logs: list[Path] = []
    for block in page:
        ready = READY.search(block.directive)
        retry = re.search(RETRY, block.directive)
        for command in block.commands:
            typed = command.replace(PORT, port)
            if ready:
                logs.append(terminal.cwd.parent / f"background-{block.line}.log")
                terminal.start(typed, ready.group("text"), logs[-1])
            elif retry:
                _retry(terminal, typed, retry.group("text"), float(retry.group("seconds")))
            else:
                terminal.run(typed)
    sandbox_log = logs[0].read_text()  # the sandbox printed what the receiver answered
    assert "webhook issue_comment.created" in sandbox_log and ": 202" in sandbox_log
    assert "webhook issues.opened" in sandbox_log
    # The receiver's terminal: no warning a person cannot act on.
    assert "UserWarning" not in logs[1].read_text(), logs[1].read_text()
    # The page's one-PR commands, in the same shell (the sandbox's settings loaded).
    said = [terminal.run(command) for block in _one_pr_runs() for command in block.commands]
    assert "0 new reviews posted, 1 already reviewed" in said[0], said[0]
    assert "1 new review posted" in said[1], said[1]
    assert "succeeded" in said[2] and "triager" in said[2], said[2]


def test_the_walkthrough_is_two_servers_and_plain_commands() -> None:
    page = _walkthrough()
    backgrounds = [b.commands for b in page if READY.search(b.directive)]
    assert backgrounds == [
        ["uv run swarm sandbox serve --webhook-url http://127.0.0.1:8787/github/webhook"],
        ["uv run swarm webhook serve --port 8787"],
    ]
    assert all(
        b.directive == "" or READY.search(b.directive) or b.directive.startswith("retry for ")
        for b in page
    )
