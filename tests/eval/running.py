"""``swarm eval`` run as a person runs it, for the eval tests that go through the real flow, with
the suite's sandbox pacing (:data:`tests.sandbox_fixtures.SANDBOX_PACING`): the eval keeps the
throttle's limits of the shell, and a second between writes only made its tests wait (the shipped
set's 48 reviews took 160 s alone on an idle machine, 85 s paced 50 ms apart, the same findings)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.paths import ROOT
from tests.python_process import run_python
from tests.sandbox_fixtures import SANDBOX_PACING


def run_eval(
    data_dir: Path, *args: str, timeout: float, **extra_env: str
) -> subprocess.CompletedProcess[str]:
    """``python -m flows eval ARGS --data-dir DATA_DIR`` from the repository, with no swarm
    setting and no Prefect API of the test run's but the sandbox pacing (plus ``extra_env``); the
    exit status is the caller's to assert."""
    from flows.local.prefect_server import prefect_home, stop

    env = {k: v for k, v in os.environ.items() if not k.startswith(("SWARM_", "PREFECT_API"))}
    env.update(SANDBOX_PACING)
    env.update(extra_env)
    try:
        return run_python(
            "-m",
            "flows",
            "eval",
            *args,
            "--data-dir",
            str(data_dir),
            env=env,
            cwd=ROOT,
            timeout=timeout,
        )
    finally:
        # The eval starts the data directory's local Prefect server, which would otherwise idle
        # on (its keeper stops it only when the folder goes) through the rest of the suite.
        stop(prefect_home(data_dir))
