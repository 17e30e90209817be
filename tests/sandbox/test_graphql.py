"""The GraphQL stand-in: viewer, rateLimit, repository lookup, the two mutations, errors."""

from __future__ import annotations

import pytest
from githubkit.exception import GraphQLFailed
from githubkit.graphql import GraphQLError

from sandbox.github.seed import TRIAGE_INSTALLATION_ID, WIDGETS_PR_CLEAN, WIDGETS_PR_DEBUG_PRINT
from sandbox.server import SandboxServer
from tests.sandbox.clients import token_client

ADD_REVIEW = """
mutation AddReview($input: AddPullRequestReviewInput!) {
  addPullRequestReview(input: $input) { pullRequestReview { id state author { login } } }
}
"""


def first_error(failed: GraphQLFailed) -> GraphQLError:
    errors = failed.response.errors
    assert errors, "a GraphQLFailed without errors"
    return errors[0]


def test_enterprise_base_url_reaches_graphql_at_api_graphql(sandbox: SandboxServer) -> None:
    gh = token_client(sandbox.url + "/api/v3", sandbox.state.mint_token(2001))
    data = gh.graphql.request("query { viewer { login } rateLimit { limit remaining cost } }")
    assert data == {
        "viewer": {"login": "swarm-reviewer[bot]"},
        "rateLimit": {"limit": 5000, "remaining": 4999, "cost": 1},
    }
    assert sandbox.state.requests[-1].path == "/api/graphql"


def test_aliases_name_the_answers(sandbox: SandboxServer) -> None:
    gh = token_client(sandbox.url, sandbox.state.mint_token(2001))
    data = gh.graphql.request("{ me: viewer { name: login } budget: rateLimit { used } }")
    assert data == {"me": {"name": "swarm-reviewer[bot]"}, "budget": {"used": 1}}


def test_add_review_mutation_records_a_review_by_the_bot(sandbox: SandboxServer) -> None:
    gh = token_client(sandbox.url, sandbox.state.mint_token(2001))
    node = gh.graphql.request(
        'query { repository(owner: "acme", name: "widgets") '
        "{ pullRequest(number: 1) { id headRefOid } } }"
    )["repository"]["pullRequest"]
    pull = sandbox.state.pull("acme/widgets", WIDGETS_PR_DEBUG_PRINT).pull
    assert pull is not None and node["headRefOid"] == pull.head_sha
    review = gh.graphql.request(
        ADD_REVIEW,
        {
            "input": {
                "pullRequestId": node["id"],
                "body": "Found a debug print.",
                "event": "REQUEST_CHANGES",
                "threads": [
                    {"path": "src/widgets/core.py", "line": 26, "side": "RIGHT", "body": "print("}
                ],
            }
        },
    )["addPullRequestReview"]["pullRequestReview"]
    assert review["state"] == "CHANGES_REQUESTED" and review["author"] == {
        "login": "swarm-reviewer[bot]"
    }
    assert [(r.user_login, r.body) for r in pull.reviews] == [
        ("swarm-reviewer[bot]", "Found a debug print.")
    ]
    assert [c.line for c in pull.review_comments] == [26]
    record = sandbox.state.requests[-1]
    assert (record.is_write, record.is_content_creation, record.resource) == (True, True, "graphql")


def test_inline_literal_input_with_braces_in_the_body(sandbox: SandboxServer) -> None:
    gh = token_client(sandbox.url, sandbox.state.mint_token(2001))
    node = gh.rest.pulls.get("acme", "widgets", WIDGETS_PR_CLEAN).parsed_data.node_id
    body = "Nice {clean} (change), thanks: ok"
    data = gh.graphql.request(
        f'mutation {{ addPullRequestReview(input: {{pullRequestId: "{node}", body: "{body}", '
        "event: COMMENT}) { pullRequestReview { state } } }"
    )
    assert data == {"addPullRequestReview": {"pullRequestReview": {"state": "COMMENTED"}}}
    pull = sandbox.state.pull("acme/widgets", WIDGETS_PR_CLEAN).pull
    assert pull is not None and pull.reviews[0].body == "Nice {clean} (change), thanks: ok"


def test_mark_ready_for_review_clears_draft(sandbox: SandboxServer) -> None:
    draft = sandbox.state.add_pull("acme/widgets", "WIP", {"NOTES.md": "wip\n"}, draft=True)
    gh = token_client(sandbox.url, sandbox.state.mint_token(2001))
    node = gh.rest.pulls.get("acme", "widgets", draft.number).parsed_data.node_id
    data = gh.graphql.request(
        "mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id}) "
        "{ pullRequest { isDraft } } }",
        {"id": node},
    )
    assert data["markPullRequestReadyForReview"]["pullRequest"]["isDraft"] is False
    assert gh.rest.pulls.get("acme", "widgets", draft.number).parsed_data.draft is False


def test_mutation_without_pull_request_write_is_forbidden(sandbox: SandboxServer) -> None:
    gh = token_client(sandbox.url, sandbox.state.mint_token(TRIAGE_INSTALLATION_ID))
    node = gh.graphql.request(
        '{ repository(owner: "acme", name: "widgets") { pullRequest(number: 1) { id } } }'
    )
    with pytest.raises(GraphQLFailed) as info:
        gh.graphql.request(
            ADD_REVIEW,
            {
                "input": {
                    "pullRequestId": node["repository"]["pullRequest"]["id"],
                    "body": "x",
                    "event": "COMMENT",
                }
            },
        )
    error = first_error(info.value)
    assert (error.type, error.message) == ("FORBIDDEN", "Resource not accessible by integration")


def test_hidden_repository_and_unknown_fields_are_graphql_errors(sandbox: SandboxServer) -> None:
    gh = token_client(sandbox.url, sandbox.state.mint_token(2001, repositories=["docs"]))
    with pytest.raises(GraphQLFailed) as info:
        gh.graphql.request('{ repository(owner: "acme", name: "widgets") { id } }')
    assert first_error(info.value).type == "NOT_FOUND"
    with pytest.raises(GraphQLFailed) as info:
        gh.graphql.request('{ organization(login: "acme") { id } }')
    assert first_error(info.value).message == "Field 'organization' doesn't exist on type 'Query'"
    with pytest.raises(GraphQLFailed) as info:
        gh.graphql.request("mutation { mergePullRequest(input: {}) { clientMutationId } }")
    assert (
        first_error(info.value).message
        == "Field 'mergePullRequest' doesn't exist on type 'Mutation'"
    )
