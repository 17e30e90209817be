"""A reaction to a conversation comment needs write access to what the comment is on, as GitHub
keys it (docs/github-facts.md, the reactions row): Issues: write for a comment on an issue, and
Issues: write or Pull requests: write for one on a pull request's conversation."""

from __future__ import annotations

import pytest
from githubkit.exception import RequestFailed

from sandbox.github.seed import REVIEWER_INSTALLATION_ID, WIDGETS, WIDGETS_ISSUE_BUG
from sandbox.server import SandboxServer
from tests.sandbox.clients import token_client

PULLS_ONLY = {"pull_requests": "write", "contents": "read", "metadata": "read"}
ROUTE = "/repos/acme/widgets/issues/comments/{}/reactions"


def _react(sandbox: SandboxServer, permissions: dict[str, str] | None, comment_id: int) -> int:
    token = sandbox.state.mint_token(REVIEWER_INSTALLATION_ID, permissions=permissions)
    gh = token_client(sandbox.url, token)
    return gh.request("POST", ROUTE.format(comment_id), json={"content": "eyes"}).status_code


def test_a_token_without_issues_write_is_refused_a_reaction_on_an_issue_comment(
    sandbox: SandboxServer,
) -> None:
    comment = sandbox.state.add_comment(WIDGETS, WIDGETS_ISSUE_BUG, "/swarm triage")
    with pytest.raises(RequestFailed) as refused:
        _react(sandbox, PULLS_ONLY, comment.id)
    assert refused.value.response.status_code == 403
    assert comment.reactions == []
    assert _react(sandbox, None, comment.id) == 201


def test_pull_requests_write_is_enough_for_a_reaction_on_a_pull_requests_comment(
    sandbox: SandboxServer,
) -> None:
    comment = sandbox.state.add_comment(WIDGETS, 1, "/swarm review")
    assert _react(sandbox, PULLS_ONLY, comment.id) == 201
    assert _react(sandbox, PULLS_ONLY, comment.id) == 200  # the same reaction again
    assert [content for _, content in comment.reactions] == ["eyes"]
