"""The event path end to end: the sandbox sends signed deliveries, the real receiver starts real
``swarm-run`` flow runs in process (Prefect's test harness), reviews land on the sandbox.

Exactly one flow run and one review per push, under redelivery and two deliveries of the same
push; ``/swarm review`` at an already reviewed head posts a re-review and says so; an opened issue
is triaged once; ``swarm run --pr`` (the flow's ``targets``) and the triager role through the flow.
"""

from __future__ import annotations

import asyncio

import pytest

from agents.posting.writer import RERUN_NOTE
from sandbox.github.seed import (
    REVIEWER_BOT,
    TRIAGE_BOT,
    WIDGETS,
    WIDGETS_ISSUE_BUG,
    WIDGETS_PR_CLEAN,
    WRITER,
)
from tests.events.harness import Events
from tests.run.conftest import Swarm, events_scenario, run_swarm

pytestmark = pytest.mark.prefect


def test_a_push_delivered_twice_and_redelivered_is_reviewed_once_by_one_run(
    swarm: Swarm,
) -> None:
    async def body(events: Events) -> None:
        number = events.state.add_pull(WIDGETS, "Add y", {"src/widgets/y.py": "Y = 1\n"}).number
        [opened] = events.hooks.take()
        same_push = events.hooks.make("pull_request", {**opened.payload, "action": "reopened"})
        answers = await asyncio.gather(events.post(opened), events.post(same_push))
        assert sorted(a.status_code for a in answers) == [202, 202]
        again = await events.post(opened)
        assert again.json() == {"status": "duplicate"}
        assert len(swarm.bot_reviews(WIDGETS, number)) == 1

    started = events_scenario(swarm, body)
    assert len(started) == 1


def test_swarm_review_at_a_reviewed_head_posts_a_marked_re_review_with_reactions(
    swarm: Swarm,
) -> None:
    run_swarm(targets=[f"{WIDGETS}#{WIDGETS_PR_CLEAN}"])
    assert len(swarm.bot_reviews(WIDGETS, WIDGETS_PR_CLEAN)) == 1

    async def body(events: Events) -> None:
        comment = events.state.add_comment(
            WIDGETS, WIDGETS_PR_CLEAN, "/swarm review", author=WRITER
        )
        [delivery] = events.hooks.take()
        assert (await events.post(delivery)).status_code == 202
        assert comment.reactions == [(REVIEWER_BOT, "eyes"), (REVIEWER_BOT, "rocket")]
        # Retried (the same delivery redelivered), it posts nothing more.
        assert (await events.post(delivery)).json() == {"status": "duplicate"}

    events_scenario(swarm, body)
    first, second = swarm.bot_reviews(WIDGETS, WIDGETS_PR_CLEAN)
    assert first.commit_id == second.commit_id
    assert second.body.startswith(RERUN_NOTE)
    assert not first.body.startswith(RERUN_NOTE)


def test_an_opened_issue_is_triaged_once_by_the_triage_bot(swarm: Swarm) -> None:
    async def body(events: Events) -> None:
        issue = events.state.add_issue(WIDGETS, "Crash on start", "It crashes with a traceback.")
        [delivery] = events.hooks.take()
        assert (await events.post(delivery)).status_code == 202
        bot_comments = [c for c in issue.comments if c.user_login == TRIAGE_BOT]
        assert len(bot_comments) == 1

    assert len(events_scenario(swarm, body)) == 1


def test_a_one_pr_run_reviews_only_that_pr_and_force_re_reviews_it(swarm: Swarm) -> None:
    state, report = run_swarm(targets=[f"{WIDGETS}#{WIDGETS_PR_CLEAN}"])
    assert state.is_completed(), state.message
    assert [o.target.split("@")[0] for o in report.outcomes] == [f"{WIDGETS}#{WIDGETS_PR_CLEAN}"]
    assert swarm.review_counts()[f"{WIDGETS}#1"] == 0
    _, again = run_swarm(targets=[f"{WIDGETS}#{WIDGETS_PR_CLEAN}"])
    assert again.already_reviewed == 1 and again.new_reviews == 0
    _, forced = run_swarm(targets=[f"{WIDGETS}#{WIDGETS_PR_CLEAN}"], force=True)
    assert forced.new_reviews == 1
    assert len(swarm.bot_reviews(WIDGETS, WIDGETS_PR_CLEAN)) == 2


def test_the_triager_role_triages_open_issues_not_yet_triaged(swarm: Swarm) -> None:
    state, report = run_swarm(repos=[WIDGETS], role="triager")
    assert state.is_completed(), state.message
    triaged = {o.target for o in report.outcomes if o.status == "succeeded"}
    assert triaged == {f"{WIDGETS}#{WIDGETS_ISSUE_BUG}", f"{WIDGETS}#5"}
    issue = swarm.state.repo(WIDGETS).issues[WIDGETS_ISSUE_BUG]
    assert [c.user_login for c in issue.comments] == [TRIAGE_BOT]
    _, again = run_swarm(repos=[WIDGETS], role="triager")
    assert again.outcomes == [] and again.already_reviewed == 2
