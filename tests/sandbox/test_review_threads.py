"""The parts of GitHub the review output needs, as the sandbox serves them to githubkit:
multi-line review comments (``start_line``, one hunk), a comment's author editing it, and an
App resolving a review thread over GraphQL (only with ``contents: write``, as on GitHub)."""

from __future__ import annotations

import pytest
from githubkit.exception import RequestFailed
from githubkit_schemas.latest.models import IssueComment, PullRequestReviewComment

from sandbox.github.seed import (
    REVIEWER_BOT,
    REVIEWER_INSTALLATION_ID,
    WIDGETS,
    WIDGETS_PR_DEBUG_PRINT,
)
from sandbox.github.seed import REVIEWER_SLUG as SLUG
from sandbox.server import SandboxServer
from tests.sandbox.clients import items, mint, token_client

PR = WIDGETS_PR_DEBUG_PRINT
CORE = "src/widgets/core.py"


def _review(sandbox: SandboxServer, number: int, comment: dict[str, object]) -> object:
    gh = token_client(sandbox.url, mint(sandbox.url, sandbox.state))
    return gh.request(
        "POST",
        f"/repos/acme/widgets/pulls/{number}/reviews",
        json={"event": "COMMENT", "body": "x", "comments": [comment]},
    )


def test_a_multi_line_comment_spans_its_lines_and_reads_back(sandbox: SandboxServer) -> None:
    comment = {"path": CORE, "start_line": 26, "line": 27, "side": "RIGHT", "body": "both"}
    _review(sandbox, PR, comment)
    gh = token_client(sandbox.url, mint(sandbox.url, sandbox.state))
    [posted] = items(
        gh.rest.pulls.list_review_comments("acme", "widgets", PR).parsed_data,
        PullRequestReviewComment,
    )
    assert (posted.start_line, posted.line, posted.start_side) == (26, 27, "RIGHT")


@pytest.mark.parametrize(
    ("start", "message"),
    [(27, "start_line must precede the end line"), (3, "Start line could not be resolved")],
)
def test_a_multi_line_comment_github_would_refuse_is_refused(
    sandbox: SandboxServer, start: int, message: str
) -> None:
    with pytest.raises(RequestFailed) as refused:
        _review(sandbox, PR, {"path": CORE, "start_line": start, "line": 27, "body": "x"})
    assert refused.value.response.status_code == 422
    assert message in refused.value.response.text


def test_a_multi_line_comment_stays_inside_one_hunk(sandbox: SandboxServer) -> None:
    text = "".join(f"line {n}\n" for n in range(1, 41))
    state = sandbox.state
    state.commit_to_branch(WIDGETS, {"long.txt": text})
    changed = text.replace("line 2\n", "line two\n").replace("line 38\n", "line thirty-eight\n")
    number = state.add_pull(WIDGETS, "Two hunks", {"long.txt": changed}).number
    with pytest.raises(RequestFailed) as refused:
        _review(sandbox, number, {"path": "long.txt", "start_line": 2, "line": 38, "body": "x"})
    assert "same hunk" in refused.value.response.text


def test_a_comments_author_edits_it_and_nobody_else_does(sandbox: SandboxServer) -> None:
    bot = token_client(sandbox.url, mint(sandbox.url, sandbox.state))
    created = bot.rest.issues.create_comment("acme", "widgets", PR, body="first").parsed_data
    edited = bot.rest.issues.update_comment("acme", "widgets", created.id, body="second")
    assert IssueComment.model_validate(edited.json()).body == "second"
    [kept] = sandbox.state.pull(WIDGETS, PR).comments
    assert (kept.id, kept.body, kept.edits, kept.user_login) == (
        created.id,
        "second",
        1,
        REVIEWER_BOT,
    )

    person = token_client(sandbox.url, sandbox.state.maintainer_pat)
    with pytest.raises(RequestFailed) as refused:
        person.rest.issues.update_comment("acme", "widgets", created.id, body="hijacked")
    assert refused.value.response.status_code == 403
    assert kept.body == "second"


RESOLVE = (
    "mutation($id: ID!) { resolveReviewThread(input: {threadId: $id}) "
    "{ thread { id isResolved resolvedBy { __typename login } } } }"
)


def _thread_id(sandbox: SandboxServer) -> str:
    gh = token_client(sandbox.url, mint(sandbox.url, sandbox.state))
    threads = gh.graphql.request(
        'query { repository(owner: "acme", name: "widgets") { pullRequest(number: 1) '
        "{ reviewThreads(first: 10) { nodes { id isResolved "
        "comments(first: 1) { nodes { author { __typename login } } } } } } } }"
    )
    [thread] = threads["repository"]["pullRequest"]["reviewThreads"]["nodes"]
    # REST's `swarm-reviewer[bot]` is GraphQL's Bot `swarm-reviewer`; the viewer keeps `[bot]`.
    assert thread["comments"]["nodes"] == [{"author": {"__typename": "Bot", "login": SLUG}}]
    assert gh.graphql.request("query { viewer { login } }")["viewer"]["login"] == REVIEWER_BOT
    return str(thread["id"])


def test_an_app_token_without_contents_write_is_refused_resolving_a_thread_as_github_does(
    sandbox: SandboxServer,
) -> None:
    """github/gh-aw#35726: pull_requests:write + contents:read answers 200, the field null and
    one FORBIDDEN error."""
    _review(sandbox, PR, {"path": CORE, "line": 26, "body": "debug print"})
    thread = _thread_id(sandbox)
    token = mint(sandbox.url, sandbox.state)  # the reviewer's grant: contents:read
    answer = token_client(sandbox.url, token).request(
        "POST", "/graphql", json={"query": RESOLVE, "variables": {"id": thread}}
    )
    assert answer.status_code == 200
    assert answer.json() == {
        "data": {"resolveReviewThread": None},
        "errors": [{"type": "FORBIDDEN", "message": "Resource not accessible by integration"}],
    }
    pull = sandbox.state.pull(WIDGETS, PR).pull
    assert pull is not None and all(c.resolved_by is None for c in pull.review_comments)


def test_a_contents_write_token_resolves_a_thread_and_graphql_names_its_bot_without_the_suffix(
    sandbox: SandboxServer,
) -> None:
    _review(sandbox, PR, {"path": CORE, "line": 26, "body": "debug print"})
    thread = _thread_id(sandbox)
    sandbox.state.installations[REVIEWER_INSTALLATION_ID].permissions["contents"] = "write"
    token = mint(
        sandbox.url,
        sandbox.state,
        repositories=["widgets"],
        permissions={"contents": "write", "pull_requests": "write"},
    )
    gh = token_client(sandbox.url, token)
    done = gh.graphql.request(RESOLVE, {"id": thread})
    assert done["resolveReviewThread"]["thread"]["isResolved"] is True
    # `resolvedBy` is typed `User`: the App's bot answers as one, by its slug.
    resolved_by = done["resolveReviewThread"]["thread"]["resolvedBy"]
    assert resolved_by == {"__typename": "User", "login": SLUG}
