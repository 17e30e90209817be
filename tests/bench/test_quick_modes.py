"""Every benchmark runs in its quickest mode, so a bench that no longer runs fails the build.

The figures are not checked here (speed is measured by running the benches, see bench/README.md);
what is checked is that each one still starts, runs its scenarios against today's code and exits
0. ``make bench`` runs them in their full modes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.paths import ROOT
from tests.sandbox_fixtures import SANDBOX_PACING

# Not one xdist group: each bench sets up its own servers and schemas, and in one group the
# quick modes (~1,200 s in all) were the suite's longest chain on one worker.
pytestmark = [pytest.mark.slow]

# bench script -> its quickest arguments (the scenarios stay, the sizes shrink).
QUICK = {
    "identity.py": ["--workers", "5", "--repeat", "5"],
    "throttle.py": ["--limit", "30", "--window", "1", "--windows", "1"],
    "shared_budget.py": [
        "--processes",
        "2",
        "--workers",
        "2",
        "--seconds",
        "2",
        "--scenarios",
        "ceiling,primary",
    ],
    "store.py": ["--events", "2000", "--sessions", "20", "--measure", "1000", "--queries", "20"],
    "prompt_cache.py": [],
    "llm_throttle.py": ["--workers", "5", "--speed", "50"],
    "context.py": [],
    "swarm.py": ["--prs", "4", "--probe-prs", "2", "--max-workers", "2"],
    "events.py": ["--pushes", "2"],
    "first_hour.py": ["--baseline", "HEAD", "--runs", "1", "--help-runs", "2"],
    "github_calls.py": ["--prs", "2"],
    "swarm_pool.py": ["--prs", "4", "--repos", "2", "--timeout", "600"],
    "real_prs.py": ["--only", "idna"],
    "confine.py": ["--runs", "2", "--files", "4"],
    "patterns.py": ["--sizes", "1024", "--no-before"],
    "workspace_search.py": ["--quick"],
}
# Modules the benches share, not benches of their own.
SHARED = {"cli.py", "databases.py", "swarm_passes.py"}
NEEDS = {"first_hour.py": "hyperfine", "confine.py": "bwrap"}


def test_every_bench_has_a_quick_mode() -> None:
    benches = {p.name for p in (ROOT / "bench").glob("*.py")} - SHARED
    assert benches == set(QUICK)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("script", sorted(QUICK))
def test_bench_runs_in_its_quick_mode(script: str) -> None:
    tool = NEEDS.get(script)
    if tool and shutil.which(tool) is None:
        if os.environ.get("SWARM_TEST_REQUIRE_BENCH_TOOLS") == "1":
            pytest.fail(f"{script} needs {tool}, which .ci/run installs")
        pytest.skip(f"{script} needs {tool}")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SWARM_", "PREFECT_API"))}
    env.update({"DO_NOT_TRACK": "1", "PREFECT_SERVER_ANALYTICS_ENABLED": "false"})
    # A bench that talks to Prefect without a server starts Prefect's ephemeral one, which runs
    # its database migrations first: on the 2-core CI machine, busy with the rest of the suite,
    # that took longer than Prefect's 20 s default and the bench failed before measuring.
    env["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"] = "180"
    # The suite's sandbox pacing: a quick mode proves the bench runs, and a second between
    # writes only made it wait. The throttle's own benches build their limits and ignore it.
    env.update(SANDBOX_PACING)
    if "SWARM_TEST_PG_URL" in os.environ:
        env["SWARM_TEST_PG_URL"] = os.environ["SWARM_TEST_PG_URL"]
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *QUICK[script]],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, f"{script} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
