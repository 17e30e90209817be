"""Confinement: a repository's code (its test command) runs only in a sandbox, with no
network, no token, key or store in reach, an environment from an allow-list, only a throwaway
copy writable, and CPU, memory, process, time and output limits. No sandbox, no run.

- ``bwrap.py``: The ``bwrap`` command line: which namespaces, which folders, which environment,
  and what the sandbox's ``/etc`` holds
- ``errors.py``: Why a command was not run: no working sandbox, or a request the runner refuses
- ``launch.py``: Start one command under ``bwrap``: wall clock, output cap, the kill of its process
  group
- ``limits.py``: What one run may use: wall time, CPU time, memory, output, processes, file sizes
- ``output.py``: A run's output within its cap: head and tail, the cut marked
- ``probe.py``: Whether a working sandbox is here, asked once by running ``true`` through it
- ``result.py``: What one run reports: how it ended, what it used, its redacted output
- ``runner.py``: The one entry point: run a command on a throwaway copy, or refuse
"""

from __future__ import annotations

from agents.confine.errors import ConfineError, SandboxUnavailable
from agents.confine.limits import Limits
from agents.confine.result import ConfinedRun
from agents.confine.runner import run_confined

__all__ = ["ConfineError", "ConfinedRun", "Limits", "SandboxUnavailable", "run_confined"]
