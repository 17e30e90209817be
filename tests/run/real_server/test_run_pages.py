"""The artifacts and events a swarm run leaves on a real Prefect server, read through its API."""

from __future__ import annotations

from typing import Any

import pytest

from tests.run.real_server.conftest import ObservedSwarm

pytestmark = [pytest.mark.prefect, pytest.mark.slow]


def _by_key(artifacts: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {a["key"]: a for a in artifacts if a.get("key")}


def test_every_worker_has_its_own_markdown_page_on_its_task_run(observed: ObservedSwarm) -> None:
    run = observed.runs[0]
    artifacts = _by_key(observed.artifacts(run.flow_run_id))
    task_runs = observed.task_runs(run.flow_run_id)
    page = artifacts["swarm-acme-widgets-1-reviewer"]
    worker = next(t for t in task_runs if t["name"].startswith("review acme/widgets#1@"))
    assert page["type"] == "markdown"
    assert page["task_run_id"] == worker["id"]
    text = page["data"]
    assert "**succeeded**" in text
    assert "- review (posted): [http" in text
    assert "## Findings" in text and "src/widgets/core.py:" in text
    assert "- cost: $" in text and "- LLM calls: " in text and "- GitHub calls: " in text
    assert len([k for k in artifacts if k.endswith("-reviewer")]) == len(
        [t for t in task_runs if t["name"].endswith(" as reviewer")]
    )


def test_the_runs_table_and_summary_link_to_each_workers_page(observed: ObservedSwarm) -> None:
    run = observed.runs[0]
    artifacts = _by_key(observed.artifacts(run.flow_run_id))
    rows = artifacts["swarm-workers"]["data"]
    rows = rows if isinstance(rows, list) else __import__("json").loads(rows)
    pages = {a["id"] for a in artifacts.values()}
    for row in rows:
        assert row["details"].startswith(f"{observed.server.url}/artifacts/artifact/"), row
        assert row["details"].rsplit("/", 1)[1] in pages
    summary = artifacts["swarm-summary"]["data"]
    assert "## Workers" in summary and f"]({observed.server.url}/artifacts/artifact/" in summary


def test_progress_reaches_every_worker_and_the_log_counts_them(observed: ObservedSwarm) -> None:
    run = observed.runs[0]
    progress = _by_key(observed.artifacts(run.flow_run_id))["swarm-progress"]
    workers = len(observed.task_runs(run.flow_run_id))
    assert progress["data"] == 100.0
    assert progress["description"] == f"{workers} of {workers} workers finished"
    lines = [log["message"] for log in observed.logs(run.flow_run_id)]
    counted = [line for line in lines if line.endswith(f"of {workers} workers finished")]
    # At most one line a second (each costs a record and an API call), and always the last.
    done = [int(line.split()[0]) for line in counted]
    assert done == sorted(done) and done[-1] == workers


def test_each_identity_has_a_table_of_its_buckets(observed: ObservedSwarm) -> None:
    run = observed.runs[0]
    artifacts = _by_key(observed.artifacts(run.flow_run_id))
    table = artifacts["swarm-identity-swarm-reviewer-bot"]
    assert table["type"] == "table"
    rows = (
        table["data"]
        if isinstance(table["data"], list)
        else __import__("json").loads(table["data"])
    )
    core = next(r for r in rows if r["bucket"] == "core")
    assert set(core) == {"bucket", "limit", "remaining", "used", "reset", "paused until"}
    assert int(core["remaining"]) < int(core["limit"])


def test_a_posted_review_is_an_event_about_its_repository_pr_and_identity(
    observed: ObservedSwarm,
) -> None:
    run = observed.runs[0]
    events = observed.events("swarm.review.posted")
    ours = [
        e
        for e in events
        if any(
            r["prefect.resource.id"] == f"prefect.flow-run.{run.flow_run_id}" for r in e["related"]
        )
    ]
    posted = {e["payload"]["review_url"] for e in ours}
    assert len(ours) == len(posted) >= 1
    event = next(
        e
        for e in ours
        if e["resource"]["prefect.resource.name"].startswith("review acme/widgets#1@")
    )
    roles = {r["prefect.resource.role"]: r["prefect.resource.id"] for r in event["related"]}
    assert roles["repository"] == "swarm.repository.acme/widgets"
    assert roles["pull-request"] == "swarm.pull-request.acme/widgets#1"
    assert roles["identity"] == "swarm.identity.swarm-reviewer[bot]"
    assert roles["task-run"].startswith("prefect.task-run.")
