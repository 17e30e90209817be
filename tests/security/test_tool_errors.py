"""Class 7, one GitHub error ends the review: a PR can make the model ask for a file that does not
exist or comment on a line GitHub cannot place, and a single 404 or 422 used to fail the whole
worker with no review. GitHub errors inside a tool go back to the model as error results; only
our own identity's failures end a worker. Inline comments that do not anchor move into the body."""

from __future__ import annotations

from typing import Any

import pytest

from agents.outcome import WorkerOutcome
from sandbox.github.diffs import commentable_lines
from sandbox.github.seed import REVIEWER_BOT, WIDGETS, WIDGETS_PR_DEBUG_PRINT
from tests.conftest import HOST_GH_TOKEN
from tests.security.conftest import bot_reviews
from tests.worker.conftest import Swarm
from tests.worker.fake_models import ReplayModel, message, tool_use

pytestmark = pytest.mark.anyio

PR = WIDGETS_PR_DEBUG_PRINT
REVIEWS = "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"


def _results(model: ReplayModel) -> list[dict[str, Any]]:
    """Every tool result the model was shown, in order (the posted review's is never shown:
    the worker ends with it, see :func:`_closing_result`)."""
    return [
        dict(block)
        for request in model.requests[1:]
        for block in request["messages"][-1]["content"]
        if block.get("type") == "tool_result"
    ]


def _closing_result(swarm: Swarm, outcome: WorkerOutcome) -> dict[str, Any]:
    """The worker's last tool result, from its transcript: the call that posted its review,
    after which the model is not asked again."""
    events = swarm.runtime.store.get_transcript(outcome.worker_id)
    results = [e.content for e in events if e.kind == "tool_result"]
    return dict(results[-1])


def _an_added_line(swarm: Swarm) -> tuple[str, int]:
    pull = swarm.sandbox.state.pull(WIDGETS, PR).pull
    assert pull is not None
    for changed in pull.files:
        _, right = commentable_lines(changed.patch or "")
        if right:
            return changed.filename, min(right)
    raise AssertionError("the seeded PR changes no line")


async def _review_making(
    swarm: Swarm, *calls: tuple[str, dict[str, Any]]
) -> tuple[ReplayModel, WorkerOutcome]:
    """Review the PR with a model that makes ``calls``, one tool call a turn, in order."""
    turns = [message([tool_use(name, args, n)]) for n, (name, args) in enumerate(calls, 1)]
    model = ReplayModel(turns)
    swarm.use_model(model.client())
    return model, await swarm.review(WIDGETS, PR)


def _github_errors(swarm: Swarm) -> list[Any]:
    return [r for r in swarm.sandbox.state.requests if r.login == REVIEWER_BOT and r.status >= 400]


async def test_a_missing_file_is_an_error_result_and_the_review_still_goes_out(
    swarm: Swarm,
) -> None:
    model, outcome = await _review_making(
        swarm,
        ("read_file", {"path": "src/widgets/no_such_module.py"}),
        ("submit_review", {"body": "Reviewed without that file."}),
    )

    [missing] = _results(model)
    assert missing.get("is_error") is True
    assert "404" in str(missing["content"])
    assert "review posted" in str(_closing_result(swarm, outcome)["preview"])
    assert outcome.status == "succeeded", outcome.reason
    assert outcome.posted
    assert len(bot_reviews(swarm, WIDGETS, PR)) == 1


def _finding(path: str, line: int, message: str) -> dict[str, Any]:
    return {
        "path": path,
        "line": line,
        "severity": "major",
        "category": "bug",
        "message": message,
    }


def _summary_text(swarm: Swarm) -> str:
    issue = swarm.sandbox.state.pull(WIDGETS, PR)
    [summary] = [c for c in issue.comments if c.user_login == REVIEWER_BOT]
    return summary.body


async def test_findings_github_cannot_place_go_into_the_summary_not_the_review(
    swarm: Swarm,
) -> None:
    path, line = _an_added_line(swarm)
    findings = [
        _finding(path, line, "On a changed line."),
        _finding(path, 9999, "Far outside any hunk."),
        _finding("src/widgets/untouched.py", 1, "A file this PR leaves alone."),
    ]
    model, outcome = await _review_making(
        swarm,
        ("submit_review", {"summary": "Findings.", "findings": findings}),
    )

    assert outcome.status == "succeeded", outcome.reason
    assert _github_errors(swarm) == []  # no 422: nothing GitHub could refuse was sent
    [review] = bot_reviews(swarm, WIDGETS, PR)
    pull = swarm.sandbox.state.pull(WIDGETS, PR).pull
    assert pull is not None
    inline = [c for c in pull.review_comments if c.review_id == review.id]
    assert [(c.path, c.line) for c in inline] == [(path, line)]
    assert "On a changed line." in inline[0].body
    summary = _summary_text(swarm)
    for moved in findings[1:]:
        assert str(moved["message"]) in summary
        assert str(moved["message"]) not in review.body
    assert _results(model) == []  # the review was its one call: nothing more to show it
    # Its last words (the next session's continuity) say where the findings went.
    [continuity] = swarm.runtime.store.list_agent_notes(worker_id=outcome.worker_id)
    assert "2 outside the diff" in continuity.body


async def test_a_review_github_refuses_goes_back_to_the_model_which_can_try_again(
    swarm: Swarm,
) -> None:
    swarm.sandbox.state.inject_failure(REVIEWS, status=422, count=1, method="POST")
    model, outcome = await _review_making(
        swarm,
        ("submit_review", {"body": "First try."}),
        ("submit_review", {"body": "Second try."}),
    )

    [refused] = _results(model)
    assert refused.get("is_error") is True and "422" in str(refused["content"])
    assert HOST_GH_TOKEN not in str(refused["content"])
    assert "review posted" in str(_closing_result(swarm, outcome)["preview"])
    assert outcome.status == "succeeded" and outcome.posted
    assert len(bot_reviews(swarm, WIDGETS, PR)) == 1
    summary = _summary_text(swarm)
    assert "Second try." in summary and "First try." not in summary


@pytest.mark.parametrize("status", [401, 403])
async def test_our_own_identity_refused_ends_the_worker_with_nothing_written(
    swarm: Swarm, status: int
) -> None:
    swarm.sandbox.state.inject_failure(
        "/repos/{owner}/{repo}/pulls/{pull_number}/files", status=status, count=5, method="GET"
    )
    model, outcome = await _review_making(
        swarm,
        ("list_pull_files", {}),
        ("submit_review", {"body": "Should never be posted."}),
    )

    assert outcome.status == "failed"
    assert outcome.reason and str(status) in outcome.reason
    # The model is never asked to work around it: a 401 ends the worker at the files it reads
    # before the first turn, a 403 at the model's own list_pull_files, its only turn.
    assert len(model.requests) == (0 if status == 401 else 1)
    assert swarm.writes() == []
