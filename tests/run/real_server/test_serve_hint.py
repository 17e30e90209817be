"""``swarm serve`` prints a command to run its deployment now; the deployment exists by then.

CI once typed that command the moment it was printed and was told "Deployment
'swarm-run/swarm-scheduled' not found!": the hint came before Prefect's ``serve`` registered the
deployment. The test stops the serving process the instant the hint is read, so nothing it does
after printing can hide the order.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

import httpx
import pytest

from tests.run.real_server.conftest import SWARM, ObservedSwarm

pytestmark = [pytest.mark.prefect, pytest.mark.slow]
HINT = "run it now, from another shell: "
NAME = "swarm-hint-check"


def test_the_deployment_the_serve_hint_names_exists_when_the_hint_is_printed(
    swarm: ObservedSwarm,
) -> None:
    serving = subprocess.Popen(
        [SWARM, "serve", "--cron", "0 3 * * *", "--name", NAME, "--repo", "acme/widgets"],
        env=swarm.env(),
        cwd=swarm.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    seen: list[str] = []
    try:
        assert serving.stdout is not None
        deadline = time.monotonic() + 120
        for line in serving.stdout:
            seen.append(line)
            if line.startswith(HINT):
                # Frozen here: whatever it would register after printing, it has not.
                os.killpg(serving.pid, signal.SIGSTOP)
                break
            assert time.monotonic() < deadline, "".join(seen)
        assert any(line.startswith(HINT) for line in seen), "".join(seen)
        assert f"prefect deployment run 'swarm-run/{NAME}'" in seen[-1]
        found = httpx.get(f"{swarm.server.api_url}/deployments/name/swarm-run/{NAME}", timeout=30)
        assert found.status_code == 200, "".join(seen)
    finally:
        os.killpg(serving.pid, signal.SIGCONT)
        os.killpg(serving.pid, signal.SIGINT)
        try:
            serving.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(serving.pid, signal.SIGKILL)
            serving.wait(timeout=10)
