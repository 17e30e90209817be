"""The demo's links point into a sandbox GitHub that stops with the demo: the demo says so, and a
second demo (a fresh sandbox on another port, the same store) prints none of the first one's."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from flows.local.prefect_server import prefect_home, stop

SWARM = str(Path(sys.executable).with_name("swarm"))
pytestmark = [pytest.mark.slow, pytest.mark.prefect]
LINK = re.compile(r"http://127\.0\.0\.1:(\d+)/\S*")


def _demo(tmp_path: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SWARM_", "PREFECT_"))}
    env.pop("ANTHROPIC_API_KEY", None)
    done = subprocess.run(
        [SWARM, "demo", "--data-dir", str(tmp_path / "data")],
        env={**env, "HOME": str(tmp_path), "COLUMNS": "200"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.timeout(1200)
def test_a_demo_says_its_links_die_with_it_and_a_second_prints_none_of_the_first(
    tmp_path: Path,
) -> None:
    try:
        outputs = [_demo(tmp_path), _demo(tmp_path)]
    finally:
        stop(prefect_home(tmp_path / "data"))
    for output in outputs:
        [sandbox] = re.findall(r"sandbox GitHub at http://127\.0\.0\.1:(\d+)", output)
        assert f"the sandbox GitHub (http://127.0.0.1:{sandbox}) stopped with the demo" in output
        prefect_ui = re.search(r"Prefect UI: http://127\.0\.0\.1:(\d+)", output)
        assert prefect_ui, output
        ports = {m.group(1) for m in LINK.finditer(output)}
        assert ports <= {sandbox, prefect_ui.group(1)}, output  # no link into another sandbox
    assert "summary of acme/widgets#" in outputs[0] and "(none in this demo" not in outputs[0]
