"""Learning through the real `swarm-run` flow (Prefect's test harness, sandbox GitHub, scripted
model): a maintainer's dismissal reply is read by the next flow run as a proposal; once a
person accepts it, the next run's full review leaves that finding out on unchanged code, and
the review of a push that changed that line raises it again."""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

from agents.store import Store
from flows.cli.app import app
from sandbox.github.feedback import grant, reply
from sandbox.github.seed import MAINTAINER, REVIEWER_BOT, WIDGETS, WIDGETS_PR_DEBUG_PRINT
from tests.run.conftest import Swarm, run_swarm

pytestmark = pytest.mark.prefect

PR = WIDGETS_PR_DEBUG_PRINT
TARGET = f"{WIDGETS}#{PR}"


def latest_review_comments(swarm: Swarm) -> list[str]:
    pull = swarm.state.pull(WIDGETS, PR).pull
    assert pull is not None
    review = swarm.bot_reviews(WIDGETS, PR)[-1]
    return [c.body for c in pull.review_comments if c.review_id == review.id]


def bot_comment(swarm: Swarm, word: str) -> Any:
    pull = swarm.state.pull(WIDGETS, PR).pull
    assert pull is not None
    return next(c for c in pull.review_comments if c.user_login == REVIEWER_BOT and word in c.body)


def run_ok(**parameters: Any) -> Any:
    state, report = run_swarm(targets=[TARGET], **parameters)
    assert state.is_completed(), state.message
    return report


def test_a_dismissal_read_by_the_flow_and_accepted_silences_the_finding_until_the_code_changes(
    swarm: Swarm, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every run reads the feedback (the interval between polls is test_feedback_poll.py's).
    monkeypatch.setenv("SWARM_LEARNING_POLL_INTERVAL_S", "0")
    assert run_ok().new_reviews == 1
    assert any("print(" in b for b in latest_review_comments(swarm))
    grant(swarm.state, WIDGETS, MAINTAINER, "admin")
    printed = bot_comment(swarm, "print(")
    reply(
        swarm.state,
        WIDGETS,
        printed.id,
        "False positive: this print is the CLI's output.",
        MAINTAINER,
    )

    # the next run reads the reply before its reviews: a proposal, nothing reviewed again
    report = run_ok()
    assert report.new_reviews == 0 and report.already_reviewed == 1
    with Store.open(None, swarm.data_dir) as store:
        (proposal,) = store.list_memories(repo=WIDGETS, states=("proposed",))
        assert store.list_memories(repo=WIDGETS) == []
    assert proposal.kind == "learning" and proposal.author == MAINTAINER
    assert proposal.source and proposal.source["signal"] == "dismissal"

    accepted = CliRunner().invoke(app, ["memory", "review", "--accept", str(proposal.id)])
    assert accepted.exit_code == 0, accepted.output

    # unchanged code: a full review again (forced, as `/swarm review` asks for one at the same
    # head; a push would only review what it changed) leaves the dismissed finding out; the
    # others are reported again, and not posted twice (their threads are there)
    again = run_ok(force=True, rerun_id="after-learning")
    assert again.new_reviews == 1
    said = [f.message for o in again.outcomes for f in o.findings]
    assert not any("print(" in m for m in said), said
    assert any("TODO" in m for m in said), said
    assert latest_review_comments(swarm) == []

    # the commented line changed: the next run's review of the push raises the finding again
    head = swarm.state.pull(WIDGETS, PR).pull
    assert head is not None
    core = swarm.state.repo(WIDGETS).commits[head.head_sha].tree["src/widgets/core.py"]
    assert isinstance(core, str)
    swarm.state.push_commit(
        WIDGETS, PR, {"src/widgets/core.py": core.replace('print(f"scaling', 'print(f"now scaling')}
    )
    assert run_ok().new_reviews == 1
    assert any("print(" in b for b in latest_review_comments(swarm))
