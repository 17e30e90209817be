"""The doc tests' terminal: a page's command blocks, and one shell that runs them as a person
would, with the project's environment standing in for ``uv``.

- :func:`blocks` reads a page's ``sh`` (and ``bash``) blocks with the directive written just above
  each: ``<!-- doc-test: background, ready at "TEXT" -->`` for a command that runs until stopped
  (started, awaited until it prints TEXT, stopped with Ctrl-C at the end), ``<!-- doc-test: not
  run (REASON) -->`` for one the test cannot run (the reason says why, and what else runs it);
- :class:`Terminal` is one shell session whose environment carries over from command to command;
- the ``terminal`` fixture: an empty directory holding the repository's Makefile (the fresh clone
  a person starts from), a clean environment, a ``uv`` shim and the scripted model behind
  ``ANTHROPIC_BASE_URL``.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from flows.local.prefect_server import prefect_home, stop
from sandbox.model import ScriptedModel
from sandbox.model.server import ScriptedServer
from tests.paths import ROOT

FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S
)
DIRECTIVE = re.compile(r"<!-- doc-test: (?P<what>.*?) -->\s*$")
SHELLS = frozenset({"sh", "bash"})
READY = re.compile(r'background, ready at "(?P<text>[^"]+)"')
UV_SHIM = """#!/bin/sh
# The doc test's uv: the project's environment is installed already.
case "$1" in
  run) shift; while [ "${1#-}" != "$1" ]; do shift; done; exec "$@" ;;
  sync) exit 0 ;;
  *) echo "doc test: 'uv $1' has no stand-in" >&2; exit 97 ;;
esac
"""


@dataclass(frozen=True)
class Block:
    line: int
    commands: list[str]
    directive: str


def blocks(text: str) -> list[Block]:
    """The page's ``sh`` blocks with the directive written just above each, if any."""
    found = []
    for match in FENCE.finditer(text):
        if match.group("info").strip() not in SHELLS:
            continue
        before = text[: match.start()].rstrip().splitlines()
        directive = DIRECTIVE.search(before[-1]) if before else None
        indent = len(match.group("indent"))
        lines = [line[indent:] for line in match.group("body").splitlines()]
        found.append(
            Block(
                line=text[: match.start()].count("\n") + 1,
                commands=_commands(lines),
                directive=directive.group("what") if directive else "",
            )
        )
    return found


def _commands(lines: list[str]) -> list[str]:
    joined: list[str] = []
    for line in lines:
        if joined and joined[-1].endswith("\\"):
            joined[-1] = joined[-1][:-1] + line.strip()
        elif line.strip() and not line.lstrip().startswith("#"):
            joined.append(line.strip())
    return joined


class Terminal:
    """One shell session: environment variables carry over from command to command."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.cwd = cwd
        self.state = cwd.parent / "terminal.env"
        self.state.write_text("")
        self.env = env
        self.background: list[subprocess.Popen[bytes]] = []
        self.transcript: list[str] = []

    def run(self, command: str, timeout: float = 600) -> str:
        script = f'. "{self.state}"\n{command}\nrc=$?\nexport -p > "{self.state}"\nexit $rc\n'
        done = subprocess.run(
            ["bash", "-c", script],
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        output = done.stdout + done.stderr
        self.transcript.append(f"$ {command}\n{output}")
        assert done.returncode == 0, "\n".join(self.transcript[-3:])
        return output

    def start(self, command: str, ready: str, log: Path, timeout: float = 300) -> str:
        script = f'. "{self.state}"\nexec {command}\n'
        with log.open("wb") as out:
            process = subprocess.Popen(
                ["bash", "-c", script],
                cwd=self.cwd,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.background.append(process)
        deadline = time.monotonic() + timeout
        while ready not in log.read_text(errors="replace"):
            assert process.poll() is None, f"$ {command}\n{log.read_text(errors='replace')}"
            assert time.monotonic() < deadline, f"$ {command}: never said {ready!r}"
            time.sleep(0.2)
        output = log.read_text(errors="replace")
        self.transcript.append(f"$ {command} &\n{output}")
        return output

    def stop_background(self) -> None:
        for process in self.background:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGINT)  # Ctrl-C, as in the page
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    """An empty directory holding the repository's Makefile, a clean environment and a uv shim."""
    clone = tmp_path / "swarm"
    clone.mkdir()
    (clone / "Makefile").symlink_to(ROOT / "Makefile")
    shims = tmp_path / "shims"
    shims.mkdir()
    uv = shims / "uv"
    uv.write_text(UV_SHIM)
    uv.chmod(0o755)
    (tmp_path / "home").mkdir()
    with ScriptedServer(ScriptedModel()) as claude:
        env = {
            "PATH": f"{shims}:{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(tmp_path / "home"),
            "LANG": "C.UTF-8",
            "COLUMNS": "200",
            "ANTHROPIC_BASE_URL": claude.url,
        }
        shell = Terminal(clone, env)
        try:
            yield shell
        finally:
            shell.stop_background()
            stop(prefect_home(clone / ".swarm"))


def sandbox_settings(clone: Path) -> dict[str, str]:
    """The settings ``swarm sandbox serve`` wrote for the clone (its ``sandbox.env``)."""
    path = clone / ".swarm" / "sandbox" / "sandbox.env"
    pairs = (line.partition("=") for line in path.read_text().splitlines() if "=" in line)
    return {key: value for key, _, value in pairs}


def with_sandbox_values(command: str, clone: Path) -> str:
    """``export SWARM_X=<a real App's value>`` as typed against the sandbox: the sandbox's value
    of the same setting (the page may export only settings the sandbox has)."""
    export = re.match(r"export (SWARM_\w+)=(\S+)(.*)", command)
    if not export:
        return command
    sandbox = sandbox_settings(clone)
    assert export.group(1) in sandbox, f"the page exports {export.group(1)}; no sandbox value"
    return f"export {export.group(1)}={sandbox[export.group(1)]}{export.group(3)}"
