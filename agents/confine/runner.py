"""Run a repository's command in the sandbox, on a throwaway copy of its working copy.

The one entry point for code from a repository: :func:`run_confined`. It refuses with
:class:`SandboxUnavailable` when no working sandbox is here (never runs the command any other
way), copies the working copy to a fresh folder (without ``.git``, whose config may hold a
credential, as a checkout's ``extraheader`` does), runs the command there under ``bwrap`` within
its limits, and deletes the copy. The caller's working copy is never written: what the tests
leave behind (a planted file, a changed source) cannot end up in a commit. The command comes
from the base branch's ``.github/swarm.yaml`` (``tests.command``); choosing it is the caller's.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from agents.confine.errors import ConfineError
from agents.confine.launch import give_to_sandbox, launch
from agents.confine.limits import Limits
from agents.confine.probe import require_sandbox
from agents.confine.result import ConfinedRun

MAX_ARGS = 64
MAX_ARG_CHARS = 4096


def run_confined(
    working_copy: Path,
    command: Sequence[str],
    limits: Limits | None = None,
    *,
    bwrap: str | None = None,
    scratch: Path | None = None,
) -> ConfinedRun:
    """Run ``command`` (an argv, never a shell line) on a throwaway copy of ``working_copy``.

    ``scratch`` is where the copy is made (the system's temporary folder by default); ``bwrap``
    a path to the program (found on ``PATH`` by default).
    """
    check_command(command)
    found = require_sandbox(bwrap)
    if not working_copy.is_dir():
        raise ConfineError(f"the working copy {working_copy} is not a folder")
    with tempfile.TemporaryDirectory(prefix="swarm-confine-", dir=scratch) as folder:
        copy = Path(folder) / "repo"
        try:
            shutil.copytree(
                working_copy, copy, symlinks=True, ignore=shutil.ignore_patterns(".git")
            )
        except (OSError, shutil.Error) as exc:
            raise ConfineError(f"could not copy the working copy for a test run: {exc}") from None
        give_to_sandbox(copy)
        return launch(found, copy, command, limits or Limits())


def check_command(command: Sequence[str]) -> None:
    """An argv of a few plain strings: what bwrap and ``execvp`` can take, nothing to parse."""
    if isinstance(command, str | bytes):
        raise ConfineError("a test command is a list of arguments, not one string")
    if not command or len(command) > MAX_ARGS:
        raise ConfineError(f"a test command has 1 to {MAX_ARGS} arguments")
    for arg in command:
        if not isinstance(arg, str) or "\0" in arg or len(arg) > MAX_ARG_CHARS:
            raise ConfineError(
                f"each argument of a test command is text of at most {MAX_ARG_CHARS} characters"
            )
    if not command[0]:
        raise ConfineError("a test command starts with a program name")
