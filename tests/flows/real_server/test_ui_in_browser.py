"""What a person sees in the Prefect UI of a real server, rendered by headless Chromium.

Each test opens a page the way a person would (by its address), waits until the app has
rendered what it should show, asserts on the rendered text and saves a screenshot.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser import Browser
from tests.flows.real_server.conftest import ObservedSwarm

pytestmark = [pytest.mark.prefect, pytest.mark.slow]


def test_the_flow_run_page_shows_the_swarms_own_log_lines(
    observed: ObservedSwarm, browser: Browser, screenshots: Path
) -> None:
    run = observed.runs[0]
    page = browser.page(f"{observed.server.url}/runs/flow-run/{run.flow_run_id}")
    page.wait_for_text(["PR(s) to review", "flows.swarm_run", "Finished in state Completed"])
    page.screenshot(screenshots / "flow-run.png")


def test_a_workers_task_run_page_shows_that_workers_activity(
    observed: ObservedSwarm, browser: Browser, screenshots: Path
) -> None:
    run = observed.runs[0]
    worker = next(t for t in observed.task_runs(run.flow_run_id) if "acme/widgets#1" in t["name"])
    page = browser.page(f"{observed.server.url}/runs/task-run/{worker['id']}")
    page.wait_for_text([worker["name"], "agents.worker", "succeeded"])
    page.screenshot(screenshots / "task-run.png")
