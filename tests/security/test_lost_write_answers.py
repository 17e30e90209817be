"""Class 13, a write whose answer is lost: GitHub stores a review and still answers 502 (or the
answer never arrives). The worker must look for its own marker before deciding: found means
posted (recorded and linked), missing means one retry under the same marker. What the run reports
must be what GitHub holds: no review twice, none counted as failed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agents.posting.keys import review_key
from agents.work import Task
from sandbox.github.seed import REVIEWER_BOT, WIDGETS, WIDGETS_ISSUE_DOCS, WIDGETS_PR_DEBUG_PRINT
from sandbox.server import SandboxServer
from tests.run.conftest import PLANTED_ANTHROPIC_KEY, SEALING_KEY, run_swarm, use_sandbox_settings
from tests.run.conftest import Swarm as FlowSwarm
from tests.security.conftest import bot_reviews
from tests.worker.conftest import Swarm
from tests.worker.fake_models import ReplayModel, message, tool_use

PR = WIDGETS_PR_DEBUG_PRINT
TRIAGE_BOT = "swarm-triage[bot]"
REVIEWS = "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"


def _review_posts(state: Any) -> list[Any]:
    return [r for r in state.requests if r.method == "POST" and r.route == REVIEWS]


@pytest.mark.anyio
async def test_a_review_stored_but_answered_502_is_reported_posted_once(swarm: Swarm) -> None:
    swarm.sandbox.state.inject_failure(REVIEWS, status=502, method="POST", after_handling=True)

    outcome = await swarm.review(WIDGETS, PR)

    assert outcome.status == "succeeded", outcome.reason
    assert outcome.posted  # this worker's review, even though its answer was lost
    [review] = bot_reviews(swarm, WIDGETS, PR)
    assert review.user_login == REVIEWER_BOT
    assert outcome.review_url and outcome.review_url.endswith(str(review.id))
    assert [r.status for r in _review_posts(swarm.sandbox.state)] == [502]
    task = swarm.pull_task(WIDGETS, PR)
    record = swarm.runtime.store.get_review_key(
        review_key(WIDGETS, PR, str(task.head_sha), "reviewer")
    )
    assert record is not None and record.state == "posted" and record.review_id == review.id


@pytest.mark.anyio
async def test_a_review_lost_before_github_stored_it_is_posted_once_more(swarm: Swarm) -> None:
    swarm.sandbox.state.inject_failure(REVIEWS, status=502, method="POST")

    outcome = await swarm.review(WIDGETS, PR)

    assert outcome.status == "succeeded", outcome.reason
    assert outcome.posted
    assert len(bot_reviews(swarm, WIDGETS, PR)) == 1
    assert [r.status for r in _review_posts(swarm.sandbox.state)] == [502, 200]


@pytest.mark.anyio
async def test_a_write_lost_twice_fails_visibly_and_never_posts_twice(swarm: Swarm) -> None:
    swarm.sandbox.state.inject_failure(REVIEWS, status=502, method="POST", count=5)
    model = ReplayModel([message([tool_use("submit_review", {"body": "Findings."}, 1)])])
    swarm.use_model(model.client())

    outcome = await swarm.review(WIDGETS, PR)

    assert bot_reviews(swarm, WIDGETS, PR) == []
    assert len(_review_posts(swarm.sandbox.state)) == 2  # the first try and one retry, no more
    assert not outcome.posted
    [result] = [
        b for b in model.requests[1]["messages"][-1]["content"] if b.get("type") == "tool_result"
    ]
    assert result.get("is_error") and "502" in str(result["content"])
    task = swarm.pull_task(WIDGETS, PR)
    key = review_key(WIDGETS, PR, str(task.head_sha), "reviewer")
    record = swarm.runtime.store.get_review_key(key)
    assert record is None or record.state != "posted"  # free for the next run


COMMENTS = "/repos/{owner}/{repo}/issues/{issue_number}/comments"


@pytest.mark.anyio
@pytest.mark.parametrize("after_handling", [True, False], ids=["stored", "not-stored"])
async def test_a_comment_whose_answer_is_lost_is_posted_exactly_once(
    swarm: Swarm, after_handling: bool
) -> None:
    swarm.sandbox.state.inject_failure(
        COMMENTS, status=502, method="POST", after_handling=after_handling
    )
    task = Task(kind="triage_issue", repo=WIDGETS, number=WIDGETS_ISSUE_DOCS)

    outcome = await swarm.run(await swarm.dispatch(task, role="triager"))

    assert outcome.status == "succeeded", outcome.reason
    issue = swarm.sandbox.state.repo(WIDGETS).issues[WIDGETS_ISSUE_DOCS]
    assert [c.user_login for c in issue.comments] == [TRIAGE_BOT]
    posts = [
        r.status for r in swarm.sandbox.state.requests if r.method == "POST" and r.route == COMMENTS
    ]
    assert posts == ([502] if after_handling else [502, 201])


@pytest.fixture
def flow_swarm(
    prefect_harness: None, sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> FlowSwarm:
    return use_sandbox_settings(monkeypatch, sandbox, tmp_path)


def test_every_first_review_stored_but_answered_502_the_run_reports_what_github_holds(
    flow_swarm: FlowSwarm,
) -> None:
    pulls = [n for n, i in flow_swarm.state.repo(WIDGETS).issues.items() if i.pull is not None]
    flow_swarm.state.inject_failure(
        REVIEWS, status=502, method="POST", count=len(pulls), after_handling=True
    )

    state, report = run_swarm(repos=[WIDGETS])

    assert state.is_completed(), state.message
    counts = {n: len(flow_swarm.bot_reviews(WIDGETS, n)) for n in pulls}
    assert counts == dict.fromkeys(pulls, 1)  # every review exists, none twice
    assert report.new_reviews == len(pulls)
    assert report.failed == []
    assert f"{len(pulls)} new reviews posted" in report.headline()
    links = {o.review_url for o in report.outcomes}
    held = {r.id for n in pulls for r in flow_swarm.bot_reviews(WIDGETS, n)}
    assert {int(str(url).rsplit("-", 1)[-1].rsplit("/", 1)[-1]) for url in links} == held
    for text in (state.message or "", report.headline()):
        assert SEALING_KEY not in text and PLANTED_ANTHROPIC_KEY not in text
