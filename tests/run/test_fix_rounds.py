"""Fix rounds end to end through the real Prefect engine, the sandbox GitHub serving the
reviewer's and the writer's Apps, and the scripted model, on SQLite and PostgreSQL: successive
runs (implement, reviewer, fixer, reviewer, fixer...) take a labelled issue to a pull request
whose blocking finding a second commit answers, a clean re-review and a ready-for-review pull
request; a finding that is never fixed stops after the configured rounds with what is open
listed in the body; a crash between rounds posts nothing twice; a reader's reply is no finding;
the writer never resolves a thread."""

from __future__ import annotations

from typing import Any

import pytest

from agents.kinds.implement import LABEL
from sandbox.github.feedback import reply
from sandbox.github.model import Review
from sandbox.github.seed import (
    FIX_PATH,
    MAINTAINER,
    READER,
    REVIEWER_APP_ID,
    REVIEWER_BOT,
    REVIEWER_INSTALLATION_ID,
    WIDGETS,
    WRITER_BOT,
    WRITER_SLUG,
    plant_fix_issue,
)
from tests.bwrap import require_bwrap
from tests.run import test_implement_flow
from tests.run.conftest import Swarm, run_swarm

# The runs' store, on SQLite and on PostgreSQL: the implement flow tests' fixture.
store = test_implement_flow.store
BLOCKING = "Every error is caught here"


@pytest.fixture
def resolving(swarm: Swarm, monkeypatch: pytest.MonkeyPatch) -> Swarm:
    """The reviewer may resolve its fixed threads: opted in, and its App granted Contents:
    write, which GitHub requires of an App to resolve a thread (docs/security.md)."""
    monkeypatch.setenv("SWARM_RESOLVE_THREADS", "true")
    swarm.state.apps[REVIEWER_APP_ID].permissions["contents"] = "write"
    swarm.state.installations[REVIEWER_INSTALLATION_ID].permissions["contents"] = "write"
    return swarm


def start(swarm: Swarm, scenario: str, config: str = "") -> int:
    number = plant_fix_issue(swarm.state, scenario, config=config)
    swarm.state.label_issue(WIDGETS, number, LABEL, by=MAINTAINER)
    return number


def run_role(role: str) -> Any:
    state, report = run_swarm(role=role, repos=(WIDGETS,))
    assert state.is_completed(), state.message
    return report


def the_pull(swarm: Swarm) -> Any:
    [pull] = [
        i
        for i in swarm.state.repo(WIDGETS).pulls()
        if i.pull is not None and i.user_login == WRITER_BOT
    ]
    return pull


def head_text(swarm: Swarm, pull: Any) -> str:
    text = swarm.state.repo(WIDGETS).commits[pull.pull.head_sha].tree[FIX_PATH]
    return text.decode() if isinstance(text, bytes) else str(text)


def threads_of(pull: Any) -> list[Any]:
    """The review threads' root comments the reviewer bot opened with a blocking finding."""
    return [
        c
        for c in pull.pull.review_comments
        if c.user_login == REVIEWER_BOT and c.in_reply_to_id is None and BLOCKING in c.body
    ]


def replies_to(pull: Any, root: Any, login: str) -> list[Any]:
    return [
        c
        for c in pull.pull.review_comments
        if c.in_reply_to_id == root.id and c.user_login == login
    ]


def writer_comments(swarm: Swarm, pull: Any) -> list[Any]:
    return [c for c in pull.comments if c.user_login == WRITER_BOT]


def resolved_by(swarm: Swarm, pull: Any) -> dict[int, str | None]:
    """Root comment id -> who resolved its thread, for the resolved threads."""
    return {c.id: c.resolved_by for c in pull.pull.review_comments if c.resolved_by}


def test_a_first_fix_that_draws_a_blocking_finding_gets_a_second_commit_and_a_ready_pull(
    resolving: Swarm, store: str
) -> None:
    require_bwrap()
    swarm = resolving
    start(swarm, "fixed")

    run_role("implementer")
    pull = the_pull(swarm)
    first = pull.pull.head_sha
    assert "except:" in head_text(swarm, pull)
    # Before the reviewer has looked, the fixer waits.
    waiting = run_role("fixer")
    assert waiting.outcomes == []

    run_role("reviewer")
    [finding] = threads_of(pull)

    fixed = run_role("fixer")
    [outcome] = fixed.outcomes
    assert outcome.status == "succeeded", outcome.reason
    second = pull.pull.head_sha
    assert second != first
    commit = swarm.state.repo(WIDGETS).commits[second]
    assert commit.signed_by == WRITER_SLUG and commit.parents == [first]
    assert "except ValueError:" in head_text(swarm, pull)
    [answer] = replies_to(pull, finding, WRITER_BOT)
    assert answer.body.startswith("Fix round 1 (commit `"), answer.body
    assert "- round 1 at `" in (pull.body or "") and "turn(s) of model time" in (pull.body or "")
    assert pull.pull.draft, "marked ready before the re-review"

    run_role("reviewer")
    # The re-review read only what changed since the reviewed head, found nothing new, and
    # resolved its fixed thread itself.
    reviews = swarm.bot_reviews(WIDGETS, pull.number)
    assert [r.commit_id for r in reviews] == [first, second]
    assert threads_of(pull) == [finding]
    assert resolved_by(swarm, pull).get(finding.id) == REVIEWER_BOT

    done = run_role("fixer")
    assert done.outcomes == []
    assert not pull.pull.draft, "not marked ready for review"
    [asked] = writer_comments(swarm, pull)
    assert f"@{MAINTAINER}" in asked.body and "ready for review" in asked.body

    writes = len(swarm.writes_by(WRITER_BOT))
    run_role("fixer")
    run_role("reviewer")
    run_role("fixer")
    assert len(swarm.writes_by(WRITER_BOT)) == writes, "a settled pull request was written again"
    # The writer never resolved a thread: every resolution is the reviewer's.
    assert set(resolved_by(swarm, pull).values()) == {REVIEWER_BOT}


def test_a_finding_never_fixed_stops_after_the_configured_rounds_with_what_is_open_listed(
    swarm: Swarm, store: str
) -> None:
    require_bwrap()
    start(swarm, "never_fixed", "writer:\n  rounds: 2\n")

    run_role("implementer")
    pull = the_pull(swarm)
    for _round in range(2):
        run_role("reviewer")
        [outcome] = run_role("fixer").outcomes
        assert outcome.status == "succeeded", outcome.reason
    run_role("reviewer")

    stopped = run_role("fixer")

    assert stopped.outcomes == []
    body = pull.body or ""
    assert "### Still open after 2 rounds" in body, body
    assert BLOCKING in body.split("### Still open after 2 rounds", 1)[1]
    assert body.count("- round ") == 2
    assert pull.pull.draft, "a pull request with blocking findings was marked ready"
    assert writer_comments(swarm, pull) == []
    writes = len(swarm.writes_by(WRITER_BOT))
    run_role("fixer")
    assert len(swarm.writes_by(WRITER_BOT)) == writes


def fixed_and_re_reviewed(swarm: Swarm) -> tuple[Any, Any]:
    """The "fixed" scenario up to its clean re-review: the pull request and its finding."""
    start(swarm, "fixed")
    run_role("implementer")
    run_role("reviewer")
    pull = the_pull(swarm)
    [finding] = threads_of(pull)
    run_role("fixer")
    run_role("reviewer")
    return pull, finding


def test_a_readers_thread_reply_is_no_finding(swarm: Swarm) -> None:
    require_bwrap()
    pull, finding = fixed_and_re_reviewed(swarm)
    reply(swarm.state, WIDGETS, finding.id, "Please also rename parse_sizes.", READER)

    report = run_role("fixer")

    assert report.outcomes == [], "a reader's words started a fix round"
    assert not pull.pull.draft
    assert len(replies_to(pull, finding, WRITER_BOT)) == 1


def test_a_maintainers_thread_reply_in_the_second_of_the_writers_answer_is_answered_next_round(
    swarm: Swarm,
) -> None:
    require_bwrap()
    # GitHub's times are whole seconds: with the sandbox's clock stopped, the writer's answer
    # and the maintainer's reply carry the same time, and only the comment ids order them.
    swarm.state.clock.set_speed(0)
    pull, finding = fixed_and_re_reviewed(swarm)
    reply(swarm.state, WIDGETS, finding.id, "Please also say why ValueError.", MAINTAINER)

    [outcome] = run_role("fixer").outcomes

    assert outcome.status == "succeeded", outcome.reason
    assert pull.pull.draft, "marked ready with a person's words unanswered"
    _first, second = replies_to(pull, finding, WRITER_BOT)
    assert second.body.startswith("Fix round 2 (no commit): Read."), second.body
    run_role("fixer")
    assert not pull.pull.draft
    assert len(writer_comments(swarm, pull)) == 1


def test_a_maintainers_approval_ends_the_loop(swarm: Swarm) -> None:
    require_bwrap()
    start(swarm, "fixed")
    run_role("implementer")
    run_role("reviewer")
    pull = the_pull(swarm)
    approve(swarm, pull, MAINTAINER)
    writes = len(swarm.writes_by(WRITER_BOT))

    report = run_role("fixer")

    assert report.outcomes == []
    assert [s for s in report.left_alone if f"approved by {MAINTAINER}" in s], report.left_alone
    assert len(swarm.writes_by(WRITER_BOT)) == writes


def approve(swarm: Swarm, pull: Any, login: str) -> None:
    with swarm.state.lock:
        assert pull.pull is not None
        pull.pull.reviews.append(
            Review(
                id=swarm.state.next_id(),
                pull_number=pull.number,
                user_login=login,
                body="Looks right to me.",
                state="APPROVED",
                commit_id=pull.pull.head_sha,
                at=swarm.state.clock.now(),
            )
        )


def test_a_round_cut_off_after_its_commit_and_run_again_posts_nothing_twice(
    resolving: Swarm, store: str
) -> None:
    """GitHub fails the round's last step (the body's round line) after the commit and the
    answer landed, then the ready comment's answer is lost after GitHub made it: every run
    after that writes nothing twice."""
    require_bwrap()
    swarm = resolving
    start(swarm, "fixed")
    run_role("implementer")
    run_role("reviewer")
    pull = the_pull(swarm)
    [finding] = threads_of(pull)
    swarm.state.inject_failure(
        "/repos/{owner}/{repo}/pulls/{pull_number}", method="PATCH", status=502, count=20
    )

    _, report = run_swarm(role="fixer", repos=(WIDGETS,))

    [cut] = report.outcomes
    assert cut.status == "failed" and "push_fix" in (cut.reason or ""), cut.reason
    fixed_head = pull.pull.head_sha
    with swarm.state.lock:
        swarm.state.failures.clear()
    assert run_role("fixer").outcomes == [], "a second round on the moved head"
    run_role("reviewer")
    swarm.state.inject_failure(
        "/repos/{owner}/{repo}/issues/{issue_number}/comments",
        method="POST",
        status=502,
        count=1,
        after_handling=True,
    )
    run_role("fixer")
    with swarm.state.lock:
        swarm.state.failures.clear()
    run_role("fixer")

    assert pull.pull.head_sha == fixed_head, "committed twice"
    assert len(replies_to(pull, finding, WRITER_BOT)) == 1
    assert len(writer_comments(swarm, pull)) == 1
    assert not pull.pull.draft
