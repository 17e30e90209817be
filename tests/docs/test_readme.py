"""README.md's commands, run as written: the block a person types against a real GitHub, here
against the sandbox (``swarm sandbox serve`` in the background first, as the quickstart has it),
and every other block marked with why it is not run and what runs it instead.

What stands in, and only that: the ``export SWARM_...=`` values are the sandbox's, ``OWNER/NAME``
is ``acme/widgets`` and PR ``#12`` is its PR 1.
"""

from __future__ import annotations

import pytest

from tests.docs.terminal import Terminal, blocks, terminal, with_sandbox_values
from tests.paths import ROOT

__all__ = ["terminal"]
PAGE = ROOT / "README.md"
STAND_INS = {"OWNER/NAME#12": "acme/widgets#1", "OWNER/NAME": "acme/widgets"}


def _typed(command: str, terminal: Terminal) -> str:
    command = with_sandbox_values(command, terminal.cwd)
    for placeholder, value in STAND_INS.items():
        command = command.replace(placeholder, value)
    return command


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_the_readmes_commands_work_as_written(terminal: Terminal) -> None:
    runnable = [b for b in blocks(PAGE.read_text(encoding="utf-8")) if not b.directive]
    assert len(runnable) == 1 and len(runnable[0].commands) >= 6, runnable
    log = terminal.cwd.parent / "sandbox.log"
    terminal.start("uv run swarm sandbox serve", "sandbox GitHub at", log)
    outputs = [terminal.run(_typed(command, terminal)) for command in runnable[0].commands]
    assert "swarm-reviewer[bot]" in outputs[-3]  # swarm verify
    assert "new reviews would be posted" in outputs[-2]
    assert "1 new review posted" in outputs[-1], outputs[-1]


def test_every_readme_block_is_run_or_says_why_not() -> None:
    for block in blocks(PAGE.read_text(encoding="utf-8")):
        assert not block.directive or block.directive.startswith("not run ("), block
