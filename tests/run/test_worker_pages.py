"""Worker pages, identity tables and events as plain data, before Prefect stores them."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from agents.dispatch.envelope import Budgets
from agents.outcome import FAILED_OUTCOMES, OUTCOME_STATUSES, WorkerOutcome
from agents.work import Assignment, Shard, Task
from flows.run.events import event_for
from flows.run.pages import (
    artifact_key,
    identity_key,
    worker_key,
    worker_markdown,
    workers_section,
)
from flows.run.report import RunReport, bucket_rows, markdown_summary, outcome_row
from flows.run.states import worker_state

TASK = Task(kind="review_pr", repo="Acme/Widgets.js", number=12, head_sha="abc1234def")
PLANTED = "ghs_" + "A" * 36


def _outcome(**kw: object) -> WorkerOutcome:
    base: dict[str, object] = {
        "worker_id": "w-1",
        "role": "reviewer",
        "identity_login": "swarm-reviewer[bot]",
        "target": TASK.label,
        "status": "succeeded",
    }
    return WorkerOutcome.model_validate(base | kw)


def test_artifact_keys_hold_only_lowercase_letters_digits_and_dashes() -> None:
    assert worker_key(Assignment(role="reviewer", task=TASK)) == "swarm-acme-widgets-js-12-reviewer"
    shard = TASK.model_copy(update={"shard": Shard(index=1, count=3)})
    assert worker_key(Assignment(role="reviewer", task=shard)).endswith("-reviewer-shard-2-of-3")
    assert identity_key("swarm-reviewer[bot]") == "swarm-identity-swarm-reviewer-bot"
    for key in (artifact_key("x" * 300), artifact_key("--A_B--"), artifact_key("é/ü#1")):
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", key) and len(key) <= 100, key


def test_a_workers_page_shows_findings_review_cost_and_budget_use_redacted() -> None:
    outcome = _outcome(
        review_url="https://github.example/acme/widgets/pull/12#pullrequestreview-1",
        posted=True,
        findings=[
            {
                "path": "a.py",
                "line": 3,
                "severity": "critical",
                "category": "security",
                "message": f"token {PLANTED} in code",
            }
        ],
        llm_calls=4,
        input_tokens=1000,
        cache_read_tokens=3000,
        cost_usd=0.5,
        github_calls=10,
    )
    page = worker_markdown(outcome, "review acme/widgets#12 as reviewer", Budgets())
    assert "**succeeded**" in page
    assert "- review (posted): [https://github.example/" in page
    assert "`a.py:3` (critical, security): token " in page and PLANTED not in page
    assert "- cost: $0.5000 of $2.0000 (25%)" in page
    assert "- LLM calls: 4 of 20 (20%)" in page
    assert "- tokens: 4000 of 200000 (2%) (cache hit 75%)" in page
    assert "- GitHub calls: 10 of 200 (5%)" in page


def test_an_identitys_table_has_one_row_per_bucket_with_its_reset_and_pause() -> None:
    until = datetime(2026, 1, 1, tzinfo=UTC).isoformat()
    snapshot = {
        "paused_until": until,
        "pause_reason": "secondary rate limit",
        "resources": {
            "core": {"limit": 5000, "remaining": 4990, "used": 10, "reset": until},
            "graphql": {"limit": None, "remaining": None, "used": None, "reset": None},
        },
    }
    rows = bucket_rows(snapshot)
    assert [r["bucket"] for r in rows] == ["core", "graphql"]
    assert rows[0]["remaining"] == "4990" and rows[1]["limit"] == "-"
    assert rows[0]["paused until"] == f"{until} (secondary rate limit)"


def test_the_summary_shows_the_rate_limits_as_a_table_not_a_dict() -> None:
    until = datetime(2026, 1, 1, tzinfo=UTC).isoformat()
    core = {"limit": 5000, "remaining": 4990, "used": 10, "reset": until}
    report = RunReport(
        run_id="run-1",
        role="reviewer",
        repos=["acme/widgets"],
        buckets={"swarm-reviewer[bot]": {"resources": {"core": core}}},
    )
    summary = markdown_summary(report)
    assert "| identity | bucket | limit | remaining | used | reset | paused until |" in summary
    assert f"| `swarm-reviewer[bot]` | core | 5000 | 4990 | 10 | {until} | - |" in summary
    assert "{" not in summary.split("## Rate-limit buckets", 1)[1]


def test_shard_rows_and_summary_lines_say_which_shard() -> None:
    shards = [_outcome(worker_id=f"w-{n}", shard=f"shard {n}/3 (15 files)") for n in (1, 2, 3)]
    rows = [outcome_row(o)["PR"] for o in shards]
    assert rows == [f"{TASK.label} [shard {n}/3 (15 files)]" for n in (1, 2, 3)]
    listed = workers_section([(o, "https://ui/a") for o in shards])
    assert len({line for line in listed.splitlines() if line.startswith("- ")}) == 3, listed


def test_routine_outcomes_make_no_event_and_the_others_name_repo_pr_and_identity() -> None:
    assignment = Assignment(role="reviewer", task=TASK)
    assert event_for(assignment, _outcome()) is None  # succeeded without posting
    assert event_for(assignment, _outcome(status="skipped")) is None
    names = {
        status: (event_for(assignment, _outcome(status=status, reason="r", posted=True)) or {})
        for status in ("succeeded", "blocked", "paused", "budget_exhausted")
    }
    assert {s: e["event"] for s, e in names.items()} == {
        "succeeded": "swarm.review.posted",
        "blocked": "swarm.worker.blocked",
        "paused": "swarm.identity.paused",
        "budget_exhausted": "swarm.worker.budget-exhausted",
    }
    blocked = event_for(
        assignment, _outcome(worker_id="-", status="blocked", reason=f"BLOCKED: {PLANTED}")
    )
    assert blocked is not None
    assert (
        blocked["resource"]["prefect.resource.id"]
        == "swarm.worker.swarm-acme-widgets-js-12-reviewer"
    )
    roles = {r["prefect.resource.role"]: r["prefect.resource.id"] for r in blocked["related"]}
    assert roles == {
        "repository": "swarm.repository.Acme/Widgets.js",
        "pull-request": "swarm.pull-request.Acme/Widgets.js#12",
        "identity": "swarm.identity.swarm-reviewer[bot]",
    }
    assert PLANTED not in str(blocked)


def test_every_outcome_has_its_own_task_run_state_and_only_failures_fail_the_run() -> None:
    states = {status: worker_state(_outcome(status=status)) for status in OUTCOME_STATUSES}
    assert {s for s, st in states.items() if st.is_failed()} == FAILED_OUTCOMES
    assert {s for s, st in states.items() if st.is_completed()} == {"succeeded", "skipped"}
    assert states["paused"].is_cancelled() and states["paused"].name == "Paused"
    assert states["skipped"].name == "Skipped"
    assert len({st.name for st in states.values()}) == len(OUTCOME_STATUSES)  # each its own
    assert all(st.message == f"{TASK.label}: {s}" for s, st in states.items())
    report = RunReport(
        run_id="r", role="reviewer", repos=[TASK.repo], outcomes=[_outcome(status="paused")]
    )
    assert report.ok and report.failed == []  # a paused worker waits; it fails nothing
