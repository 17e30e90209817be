"""The shipped automation (automations/worker-blocked.yaml), created the documented way on a
real Prefect server, notifies when a swarm worker is blocked."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from sandbox.github.seed import WIDGETS, WIDGETS_PR_CLEAN
from tests.paths import ROOT
from tests.prefect_server import client_env
from tests.python_process import run_python
from tests.run.real_server.conftest import ObservedSwarm

pytestmark = [pytest.mark.prefect, pytest.mark.slow]

AUTOMATION = ROOT / "automations" / "worker-blocked.yaml"
NOTIFY_TIMEOUT_S = 120.0

MAKE_BLOCK = """
import sys
from prefect.blocks.notifications import CustomWebhookNotificationBlock
block = CustomWebhookNotificationBlock(
    name="swarm alerts", url=sys.argv[1], json_data={"text": "{{subject}}\\n{{body}}"}
)
print(block.save("swarm-alerts-test", overwrite=True))
"""


class _Receiver(BaseHTTPRequestHandler):
    received: list[str] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.received.append(self.rfile.read(length).decode())
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def webhook() -> Iterator[tuple[str, list[str]]]:
    """A loopback endpoint standing in for Slack: it keeps what it is sent."""
    received: list[str] = []
    handler = type("Receiver", (_Receiver,), {"received": received})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", received
    finally:
        server.shutdown()
        server.server_close()


def _prefect(observed: ObservedSwarm, *args: str) -> subprocess.CompletedProcess[str]:
    env = client_env(observed.server.api_url, observed.root / "client-home")
    return run_python(*args, env=env, timeout=120)


# A second swarm run and the server's trigger and action services, on a machine under load.
@pytest.mark.timeout(600)
def test_the_worker_blocked_automation_is_created_from_its_file_and_notifies(
    observed: ObservedSwarm, webhook: tuple[str, list[str]], tmp_path: Path
) -> None:
    url, received = webhook
    made = _prefect(observed, "-c", MAKE_BLOCK, url)
    assert made.returncode == 0, made.stderr
    block_id = made.stdout.strip().splitlines()[-1]
    # The documented steps: put the block's id in the file, create the automation from it.
    ours = tmp_path / "worker-blocked.yaml"
    ours.write_text(AUTOMATION.read_text().replace("NOTIFICATION_BLOCK_ID", block_id))
    created = _prefect(observed, "-m", "prefect", "automation", "create", "--from-file", str(ours))
    assert created.returncode == 0, created.stdout + created.stderr
    assert "Created automation 'swarm worker blocked'" in created.stdout
    automations = observed.server.api("POST", "/automations/filter", {})
    (automation,) = [a for a in automations if a["name"] == "swarm worker blocked"]
    assert automation["trigger"]["expect"] == ["swarm.worker.blocked"]

    # A new commit makes the PR need a review; a wrong expected login blocks its worker.
    observed.sandbox.state.push_commit(WIDGETS, WIDGETS_PR_CLEAN, {"NOTES.md": "again\n"})
    run = observed.run("--repo", WIDGETS, SWARM_APP_BOT_LOGIN="impostor[bot]")
    assert run.returncode == 1, run.output
    # The server stores events through its messaging pipeline, a moment after they arrive.
    deadline = time.monotonic() + NOTIFY_TIMEOUT_S
    while True:
        events = observed.events("swarm.worker.blocked")
        blocked = [e for e in events if run.flow_run_id in str(e)]
        if blocked or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert len(blocked) == 1

    deadline = time.monotonic() + NOTIFY_TIMEOUT_S
    while not received and time.monotonic() < deadline:
        time.sleep(0.5)
    assert received, "the automation never notified"
    text = json.loads(received[0])["text"]
    assert f"swarm: worker blocked: review {WIDGETS}#{WIDGETS_PR_CLEAN}@" in text
    assert f"pull request: {WIDGETS}#{WIDGETS_PR_CLEAN}" in text
    assert "identity: impostor[bot]" in text or "identity: swarm-reviewer[bot]" in text
    assert "reason: BLOCKED: identity mismatch" in text
