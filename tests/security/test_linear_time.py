"""Trust class 1 of issue 37: attacker text costs linear time.

Anyone who can open an issue or comment writes text that redaction, the command reader and the
untrusted-text delimiter read before anything else looks at it. Patterns that backtracked made a
GitHub-sized body (65,536 characters) cost minutes of CPU with the GIL held: the ``secret`` rules
on ``a.a.a...`` after a key word (about 11 minutes), the URL-credentials rule on the same run
(over a minute), the ``/swarm`` line on blanks, the ``<`` of a tag on blanks (about 80 s), and a
run of bare token prefixes recursed once per prefix into a ``RecursionError``.

Each input below is GitHub's largest body, built to hit one pattern's worst case, and is handed
to the product function in a child process that gets 30 seconds: the linear code takes well
under a second, the quadratic code minutes (orders of magnitude past the bound, so the test is
not a timing test). Speed itself is measured in ``bench/patterns.py``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agents.redact import MARK_PREFIX

BODY = 65_536
CEILING_SECONDS = 30

HOSTILE: dict[str, tuple[str, str]] = {
    # name: (the function, its argument)
    "secret rule on a.a.a after a key word": (
        "agents.redact:redact",
        ("token " + "a." * BODY)[:BODY] + "(",
    ),
    "quoted secret rule on .a.a.a after a key word": (
        "agents.redact:redact",
        ('"password": ' + ".a" * BODY)[:BODY] + "(",
    ),
    "url credentials on a.a.a with an @": (
        "agents.redact:redact",
        ("@ " + "a." * BODY)[:BODY] + "\x00",
    ),
    "a run of bare token prefixes": (
        "agents.redact:redact",
        ("ghp_aaaa " * BODY)[:BODY],
    ),
    "a token prefix on every line": (
        "agents.redact:redact",
        ("ghp_x\n" * BODY)[:BODY],
    ),
    "the /swarm line on blanks": (
        "agents.events.commands:find_command",
        "/swarm a" + " " * BODY + "b",
    ),
    "a tag opener on blanks": ("agents.llm.untrusted:neutralise", "<" + " " * BODY + "x"),
    "a tag opener on blanks, not ASCII": (
        "agents.llm.untrusted:neutralise",
        "é<" + " " * BODY + "x",
    ),
}

_CHILD = """
import importlib, sys
module, name = sys.argv[1].split(":")
text = open(sys.argv[2], encoding="utf-8").read()
out = getattr(importlib.import_module(module), name)(text)
sys.stdout.write(str(out))
"""


def _run(function: str, text: str, tmp_path: Path) -> str:
    path = tmp_path / "input.txt"
    path.write_text(text, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, function, str(path)],
        capture_output=True,
        text=True,
        timeout=CEILING_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.parametrize("shape", list(HOSTILE), ids=list(HOSTILE))
def test_a_github_sized_hostile_text_is_read_in_linear_time(shape: str, tmp_path: Path) -> None:
    function, text = HOSTILE[shape]
    _run(function, text, tmp_path)  # a quadratic pattern runs past the ceiling: TimeoutExpired


def test_every_prefix_in_a_run_of_them_is_redacted_without_recursing(tmp_path: Path) -> None:
    # Before: each prefix handed the rest of the text back to redaction, one level deeper.
    # Words after a prefix, not random: each prefix is a token of its own, the next one is not
    # a piece of it.
    text = "ghp_abcd " * 6_000
    out = _run("agents.redact:redact", text, tmp_path)
    assert out.count(f"{MARK_PREFIX}github-token]") == 6_000
    assert "ghp_" not in out


def test_a_hostile_run_still_has_its_secrets_redacted(tmp_path: Path) -> None:
    secret = "hunter2hunter2"
    text = "a." * 20_000 + f' password = "{secret}" ' + "a." * 20_000 + " https://u:pw9@h.test/"
    out = _run("agents.redact:redact", text, tmp_path)
    assert secret not in out and "u:pw9@" not in out
