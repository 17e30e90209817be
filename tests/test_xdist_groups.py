"""The suite's server-sharing groups (tests/xdist_groups.py) really run on one worker.

`make test` runs ``--dist loadgroup`` so that the tests sharing one Prefect server or one work
pool share it. Until this test the groups held nowhere: our marks were added after xdist had read
them, and on pytest 9.2 xdist loses every group anyway (pytest-dev/pytest-xdist#1386). Each worker
then set up its own work pool (about 200 s) and its own real Prefect server. This runs a
two-worker session the way the Makefile does, with our plugin, over a planted module at a grouped
path, and reads where each test ran and how often the shared fixture was set up.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.paths import ROOT
from tests.xdist_groups import XDIST_GROUPS

GROUPED = """
import os
import pytest

@pytest.fixture(scope="module")
def shared():
    with open("setups.log", "a") as log:
        log.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")

@pytest.mark.parametrize("n", range(6))
def test_grouped(shared, n):
    pass
"""

LOOSE = """
import pytest

@pytest.mark.parametrize("n", range(6))
def test_loose(n):
    pass
"""


def test_a_group_sharing_a_module_fixture_sets_it_up_once_on_one_worker(tmp_path: Path) -> None:
    grouped = next(prefix for prefix in XDIST_GROUPS if prefix.endswith(".py"))
    (tmp_path / grouped).parent.mkdir(parents=True)
    (tmp_path / grouped).write_text(GROUPED)
    (tmp_path / "test_loose.py").write_text(LOOSE)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    plugins = ["-p", "tests.xdist_groups", "-p", "no:cacheprovider", "-p", "no:randomly"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-v", *plugins],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ran = [line for line in done.stdout.splitlines() if "PASSED" in line]
    assert len(ran) == 12, done.stdout
    workers = {line.split("]", 1)[0].lstrip("[") for line in ran if "test_grouped" in line}
    assert len(workers) == 1, done.stdout
    assert (tmp_path / "setups.log").read_text().splitlines() == sorted(workers), done.stdout
