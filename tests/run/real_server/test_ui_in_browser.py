"""What a person sees in the Prefect UI of a real server, rendered by headless Chromium.

Each test opens a page the way a person would (by its address, or by following a link the run
left), waits until the app has rendered what it should show, asserts on the rendered text and
saves a screenshot. With ``SWARM_SCREENSHOTS_DIR=docs/img`` these are the pictures in
docs/operations.md.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from flows.run.request import RunRequest
from sandbox.github.seed import REPOS
from tests.browser import Browser, Page
from tests.run.real_server.conftest import ObservedSwarm

pytestmark = [pytest.mark.prefect, pytest.mark.slow]

WORKER_STORY = [
    "identity verified: swarm-reviewer[bot]",
    "LLM call 1 (",
    "cache hit",
    "read the changed files: page 1/1",
    "checkpoint: ",
    "review posted: ",
    "finding 1 of 3: ",
    "ended succeeded: ",
]
# The run's artifacts, listed on its Artifacts tab.
RUN_ARTIFACTS = [
    "swarm-workers",
    "swarm-summary",
    "swarm-progress",
    "swarm-identity-swarm-reviewer-bot",
    "Task runs",
]
# A worker's own page (the runs table links to it): outcome, findings, cost and budget use.
WORKER_PAGE = [
    "succeeded",
    "review (posted): http",
    "Findings",
    "src/widgets/core.py:",
    "Cost and budget use",
    "cost: $",
    "LLM calls: ",
    "of 20",
    "GitHub calls: ",
]


def _worker(observed: ObservedSwarm) -> dict[str, Any]:
    run = observed.runs[0]
    return next(t for t in observed.task_runs(run.flow_run_id) if "acme/widgets#1" in t["name"])


def _worker_page(
    observed: ObservedSwarm, browser: Browser, path: str
) -> tuple[dict[str, Any], Page]:
    """The first worker's task run, and the UI page at ``path`` (``{id}``: that task run's id)."""
    worker = _worker(observed)
    return worker, browser.page(observed.server.url + path.format(id=worker["id"]))


def _artifact(observed: ObservedSwarm, key: str) -> dict[str, Any]:
    found = [a for a in observed.artifacts(observed.runs[0].flow_run_id) if a["key"] == key]
    assert len(found) == 1, key
    return found[0]


def test_the_flow_run_page_shows_the_swarms_and_its_workers_activity(
    observed: ObservedSwarm, browser: Browser, screenshots: Path
) -> None:
    run = observed.runs[0]
    page = browser.page(f"{observed.server.url}/runs/flow-run/{run.flow_run_id}")
    page.wait_for_text(
        ["PR(s) to review", "flows.run.flow", "identity verified: swarm-reviewer[bot]"]
    )
    # Further down the log: the workers' ends, counted, and the run's own end.
    workers = len(observed.task_runs(run.flow_run_id))
    counted = f"{workers} of {workers} workers finished"
    page.wait_for_text(["ended succeeded: ", counted, "Finished in state Completed"], scroll=True)
    page.evaluate("window.scrollTo(0, 0)")
    time.sleep(1)  # the run graph (a canvas) draws its task runs after the text is there
    page.screenshot(screenshots / "flow-run.png")
    page.click_text("Artifacts")
    page.wait_for_text(RUN_ARTIFACTS)
    page.screenshot(screenshots / "flow-run-artifacts.png")


def test_the_flow_run_page_shows_what_the_run_was_asked_as_its_parameters(
    observed: ObservedSwarm, browser: Browser, screenshots: Path
) -> None:
    """The flow's one parameter, ``request``, each of its fields readable on the run's
    Parameters tab (a run started in process, as ``swarm run`` starts it, stores them all)."""
    run = observed.runs[0]
    assert list(run.flow_run["parameters"]) == ["request"]
    asked = RunRequest.of_parameters(run.flow_run["parameters"])
    assert (asked.repos, asked.role, asked.dry_run) == (tuple(REPOS), "reviewer", False)
    page = browser.page(f"{observed.server.url}/runs/flow-run/{run.flow_run_id}")
    page.wait_for_text(["Parameters"])
    page.click_text("Parameters")
    page.wait_for_text(["request", "repos", *REPOS, "max_workers", "dry_run"])
    page.screenshot(screenshots / "flow-run-parameters.png")


def test_a_workers_task_run_page_tells_its_story_and_holds_its_page(
    observed: ObservedSwarm, browser: Browser, screenshots: Path
) -> None:
    worker, page = _worker_page(observed, browser, "/runs/task-run/{id}")
    text = page.wait_for_text([worker["name"], "agents.worker", *WORKER_STORY])
    positions = [text.index(line) for line in WORKER_STORY]
    assert positions == sorted(positions), "the story should read in order, oldest first"
    page.screenshot(screenshots / "task-run.png")
    page.click_text("Artifacts")
    page.wait_for_text(["swarm-acme-widgets-1-reviewer", f"{worker['name']}: succeeded"])


def test_the_runs_table_links_to_a_workers_page_with_findings_cost_and_budget(
    observed: ObservedSwarm, browser: Browser, screenshots: Path
) -> None:
    worker = _worker(observed)
    rows = _artifact(observed, "swarm-workers")["data"]
    rows = rows if isinstance(rows, list) else json.loads(rows)
    link = next(r["details"] for r in rows if r["PR"].startswith("acme/widgets#1@"))
    page = browser.page(link)
    page.wait_for_text([worker["name"], *WORKER_PAGE])
    page.screenshot(screenshots / "worker-artifact.png")


def test_an_identitys_buckets_are_a_table_in_the_ui(
    observed: ObservedSwarm, browser: Browser, screenshots: Path
) -> None:
    table = _artifact(observed, "swarm-identity-swarm-reviewer-bot")
    page = browser.page(f"{observed.server.url}/artifacts/artifact/{table['id']}")
    page.wait_for_text(["Rate-limit buckets of swarm-reviewer[bot]", "remaining", "reset", "core"])
    page.screenshot(screenshots / "identity-buckets.png")


def test_the_event_feed_shows_a_workers_review_event_with_its_pr_and_identity(
    observed: ObservedSwarm, browser: Browser, screenshots: Path
) -> None:
    worker, page = _worker_page(observed, browser, "/events?resource=prefect.task-run.{id}")
    page.wait_for_text(
        [
            "Swarm review posted",
            "swarm.review.posted",
            "swarm.repository.acme/widgets",
            "swarm.pull-request.acme/widgets#1",
            "swarm.identity.swarm-reviewer[bot]",
            worker["name"],
        ]
    )
    page.scroll_to_text("Swarm review posted")
    page.screenshot(screenshots / "events.png")


def _in_view(page: Page, header: str) -> bool | None:
    """Whether the table header cell reading ``header`` shows whole, without scrolling the
    table sideways: it ends inside the box that scrolls it (None: no such header)."""
    found = page.evaluate(
        "(() => { const want = " + json.dumps(header) + ";"
        " const cell = [...document.querySelectorAll('th')].find("
        "   c => c.innerText.trim() === want);"
        " if (!cell) return null;"
        " let box = cell.parentElement;"
        " while (box && box.scrollWidth <= box.clientWidth + 1) box = box.parentElement;"
        " const right = box ? box.getBoundingClientRect().right : window.innerWidth;"
        " return cell.getBoundingClientRect().right <= right + 1; })()"
    )
    return None if found is None else bool(found)


def test_the_workers_table_keeps_cost_and_review_in_view_at_1400_px(
    observed: ObservedSwarm, browser: Browser, screenshots: Path
) -> None:
    table = _artifact(observed, "swarm-workers")
    page = browser.page(f"{observed.server.url}/artifacts/artifact/{table['id']}")
    metrics = {"width": 1400, "height": 900, "deviceScaleFactor": 1, "mobile": False}
    browser.call("Emulation.setDeviceMetricsOverride", page.session, **metrics)
    page.wait_for_text(["acme/widgets#1@", "outcome", "cost", "review"])
    time.sleep(1)
    page.screenshot(screenshots / "workers-table.png")
    for header in ("PR", "cost", "review", "outcome"):
        assert _in_view(page, header), f"{header!r} is behind the table's sideways scroll"
