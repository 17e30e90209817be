"""The repository's tests, run for the writer: the base branch's command, in the sandbox, on a
throwaway copy of the working copy, or not at all, and why.

The command is the one ``.github/swarm.yaml`` names on the base commit (read by the bench); the
model can only ask for a run, never say what runs. The run itself is :mod:`agents.confine`'s: no
network, a fresh HOME, an allow-listed environment with no token or key, only its copy writable,
and time, CPU, memory and output limits. Without a working sandbox nothing runs, and the result
says so. Its output is the repository's text: redacted, and shown to the model as data.
"""

from __future__ import annotations

import asyncio
import shlex

from agents.confine import ConfineError, Limits, run_confined
from agents.writer.bench import TestRun, WriterBench

NO_COMMAND = (
    "not run: the base branch's .github/swarm.yaml names no test command (tests.command), "
    "and the writer runs nothing else"
)


async def run_suite(bench: WriterBench) -> TestRun:
    """Run the base's test command on ``bench``'s working copy; the run is kept on the bench
    (the pull request's body lists every one)."""
    tests = bench.tests
    if tests is None:
        run = TestRun("", NO_COMMAND, None)
    else:
        command = shlex.join(tests.command)
        limits = Limits(
            wall_seconds=float(tests.timeout_seconds), cpu_seconds=tests.timeout_seconds
        )
        try:
            done = await asyncio.to_thread(
                run_confined, bench.workspace.root, tests.command, limits
            )
        except ConfineError as exc:  # no sandbox here (SandboxUnavailable) or a refused request
            run = TestRun(command, f"not run: {exc}", None)
        else:
            run = TestRun(command, done.summary(), done.passed, done.output)
    bench.test_runs.append(run)
    return run
