"""docs/quickstart.md, walked as a person would: every ``sh`` block, in order, in one terminal.

The commands are read from the page itself, so the page cannot drift from the program. What the
test stands in for, and only that:

- ``uv``: the project's environment is already installed here, so ``uv run X`` runs X from it
  and ``uv sync`` does nothing (a shim first on PATH); ``make`` uses the real Makefile;
- ``RUN_ID`` and ``WORKER_ID``: ids a person copies from a table, read from the store;
- section 4's ``export SWARM_...=`` values: a real App's, replaced by the sandbox's values of the
  same names (the page may only export settings the sandbox has);
- Claude: the scripted model behind ``ANTHROPIC_BASE_URL`` (offline machine).

A block preceded by ``<!-- doc-test: background, ready at "TEXT" -->`` is a command that runs
until stopped (the sandbox, ``swarm serve``): it is started, awaited until it prints TEXT, and
stopped (Ctrl-C) at the end. ``<!-- doc-test: not run (REASON) -->`` skips a block.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from flows.local.prefect_server import prefect_home, stop
from sandbox.model import ScriptedModel
from sandbox.model.server import ScriptedServer

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "quickstart.md"
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S
)
DIRECTIVE = re.compile(r"<!-- doc-test: (?P<what>.*?) -->\s*$")
READY = re.compile(r'background, ready at "(?P<text>[^"]+)"')
UV_SHIM = """#!/bin/sh
# The doc test's uv: the project's environment is installed already.
case "$1" in
  run) shift; while [ "${1#-}" != "$1" ]; do shift; done; exec "$@" ;;
  sync) exit 0 ;;
  *) echo "doc test: 'uv $1' has no stand-in" >&2; exit 97 ;;
esac
"""
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


@dataclass(frozen=True)
class Block:
    line: int
    commands: list[str]
    directive: str


def blocks(text: str) -> list[Block]:
    """The page's ``sh`` blocks with the directive written just above each, if any."""
    found = []
    for match in FENCE.finditer(text):
        if match.group("info").strip() != "sh":
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


def _sandbox_settings(clone: Path) -> dict[str, str]:
    path = clone / ".swarm" / "sandbox" / "sandbox.env"
    pairs = (line.partition("=") for line in path.read_text().splitlines() if "=" in line)
    return {key: value for key, _, value in pairs}


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
    export = re.match(r"export (SWARM_\w+)=(\S+)(.*)", command)
    if export:
        sandbox = _sandbox_settings(clone)
        assert export.group(1) in sandbox, f"the page exports {export.group(1)}; no sandbox value"
        return f"export {export.group(1)}={sandbox[export.group(1)]}{export.group(3)}"
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
