"""Every route checks the token's permissions and repositories, worded as GitHub words it."""

from __future__ import annotations

import pytest
from githubkit.exception import RequestFailed
from githubkit_schemas.latest.types import (
    ReposOwnerRepoPullsPullNumberReviewsPostBodyPropCommentsItemsType as ReviewComment,
)

from sandbox.github.seed import (
    DOCS,
    TRIAGE_INSTALLATION_ID,
    WIDGETS_ISSUE_BUG,
    WIDGETS_PR_DEBUG_PRINT,
)
from sandbox.server import SandboxServer
from tests.sandbox.clients import token_client

FORBIDDEN = "Resource not accessible by integration"


def _failure(call: object) -> RequestFailed:
    with pytest.raises(RequestFailed) as info:
        assert callable(call)
        call()
    return info.value


def test_triage_token_cannot_read_or_review_pull_requests(sandbox: SandboxServer) -> None:
    gh = token_client(sandbox.url, sandbox.state.mint_token(TRIAGE_INSTALLATION_ID))
    err = _failure(lambda: gh.rest.pulls.list("acme", "widgets"))
    assert err.response.status_code == 403
    assert err.response.json()["message"] == FORBIDDEN
    assert err.response.json()["documentation_url"].startswith("https://docs.github.com/")
    err = _failure(
        lambda: gh.rest.pulls.create_review(
            "acme", "widgets", 1, data={"body": "x", "event": "COMMENT"}
        )
    )
    assert err.response.status_code == 403
    # Issues are within its grant.
    assert gh.rest.issues.create_comment(
        "acme", "widgets", WIDGETS_ISSUE_BUG, body="triaged"
    ).parsed_data.id


def test_read_only_issue_token_cannot_comment(sandbox: SandboxServer) -> None:
    token = sandbox.state.mint_token(TRIAGE_INSTALLATION_ID, permissions={"issues": "read"})
    gh = token_client(sandbox.url, token)
    assert (
        gh.rest.issues.get("acme", "widgets", WIDGETS_ISSUE_BUG).parsed_data.number
        == WIDGETS_ISSUE_BUG
    )
    err = _failure(
        lambda: gh.rest.issues.create_comment("acme", "widgets", WIDGETS_ISSUE_BUG, body="no")
    )
    assert (err.response.status_code, err.response.json()["message"]) == (403, FORBIDDEN)
    err = _failure(lambda: gh.rest.repos.get_content("acme", "widgets", "README.md"))
    assert err.response.status_code == 403


def test_repositories_outside_the_token_are_hidden_as_404(sandbox: SandboxServer) -> None:
    token = sandbox.state.mint_token(2001, repositories=["widgets"])
    gh = token_client(sandbox.url, token)
    for call in (
        lambda: gh.rest.repos.get("acme", "gadgets"),
        lambda: gh.rest.pulls.list("acme", "gadgets"),
        lambda: gh.rest.issues.list_for_repo("acme", "docs"),
        lambda: gh.rest.repos.get("acme", "no-such-repo"),
    ):
        err = _failure(call)
        assert (err.response.status_code, err.response.json()["message"]) == (404, "Not Found")
    assert gh.rest.repos.get("acme", "widgets").parsed_data.name == "widgets"


def test_pat_kinds_answer_with_their_own_wording(sandbox: SandboxServer) -> None:
    state = sandbox.state
    reader = state.add_pat(
        "swarm-bot", fine_grained=True, permissions={"metadata": "read"}, repositories=[DOCS]
    )
    gh = token_client(sandbox.url, reader)
    err = _failure(lambda: gh.rest.issues.list_for_repo("acme", "docs"))
    assert err.response.json()["message"] == "Resource not accessible by personal access token"
    assert _failure(lambda: gh.rest.repos.get("acme", "widgets")).response.status_code == 404
    maintainer = token_client(sandbox.url, state.maintainer_pat)
    assert maintainer.rest.pulls.get("acme", "widgets", 1).parsed_data.number == 1


def test_pull_request_permission_is_enough_to_comment_on_a_pull_via_issues(
    sandbox: SandboxServer,
) -> None:
    token = sandbox.state.mint_token(2001, permissions={"pull_requests": "write"})
    gh = token_client(sandbox.url, token)
    created = gh.rest.issues.create_comment(
        "acme", "widgets", WIDGETS_PR_DEBUG_PRINT, body="summary"
    )
    assert created.status_code == 201
    err = _failure(
        lambda: gh.rest.issues.create_comment("acme", "widgets", WIDGETS_ISSUE_BUG, body="no")
    )
    assert err.response.status_code == 403


@pytest.mark.parametrize(
    ("comment", "error"),
    [
        ({"path": "src/widgets/nope.py", "line": 1, "body": "x"}, "Path could not be resolved"),
        ({"path": "src/widgets/core.py", "line": 2, "body": "x"}, "Line could not be resolved"),
        (
            {"path": "src/widgets/core.py", "position": 99, "body": "x"},
            "Position could not be resolved",
        ),
    ],
    ids=["unknown-path", "line-outside-diff", "position-outside-diff"],
)
def test_inline_comments_must_land_on_the_diff(
    sandbox: SandboxServer, comment: ReviewComment, error: str
) -> None:
    gh = token_client(sandbox.url, sandbox.state.mint_token(2001))
    err = _failure(
        lambda: gh.rest.pulls.create_review(
            "acme",
            "widgets",
            WIDGETS_PR_DEBUG_PRINT,
            data={"body": "b", "event": "COMMENT", "comments": [comment]},
        )
    )
    assert err.response.status_code == 422
    assert err.response.json()["errors"] == [error]
    pull = sandbox.state.pull("acme/widgets", WIDGETS_PR_DEBUG_PRINT).pull
    assert pull is not None and pull.reviews == []


def test_review_on_a_stale_commit_id_is_refused(sandbox: SandboxServer) -> None:
    gh = token_client(sandbox.url, sandbox.state.mint_token(2001))
    err = _failure(
        lambda: gh.rest.pulls.create_review(
            "acme", "widgets", 1, data={"body": "b", "event": "COMMENT", "commit_id": "0" * 40}
        )
    )
    assert err.response.json()["errors"] == ["commit_id is not part of the pull request"]
