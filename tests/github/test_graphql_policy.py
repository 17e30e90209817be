from __future__ import annotations

import re

import pytest

from agents.github import GraphQLNotAllowed, check_graphql


def refusal(document: str) -> str:
    """What the check says when it refuses ``document`` (it must refuse it)."""
    with pytest.raises(GraphQLNotAllowed) as info:
        check_graphql(document)
    return str(info.value)


def test_identity_check_and_rate_limit_queries_are_allowed() -> None:
    assert check_graphql("query { viewer { login } }").fields == ("viewer",)
    op = check_graphql("query Q { rateLimit { cost remaining resetAt } viewer { login id } }")
    assert op.kind == "query" and op.fields == ("rateLimit", "viewer")


def test_allowed_mutations_pass_and_a_review_counts_as_content() -> None:
    op = check_graphql(
        'mutation($id: ID!) { addPullRequestReview(input: {pullRequestId: $id, body: "x"}) '
        "{ pullRequestReview { id } } }"
    )
    assert op.kind == "mutation" and op.creates_content
    assert not check_graphql(
        'mutation { markPullRequestReadyForReview(input: {pullRequestId: "1"}) '
        "{ clientMutationId } }"
    ).creates_content


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            '{ repository(owner: "o", name: "r") { pullRequest(number: 1) { title } } }',
            "GraphQL query field 'repository.pullRequest' is not on the allow-list "
            "(REST-first policy): use GET /repos/{owner}/{repo}/pulls/{pull_number}",
        ),
        (
            'mutation { addComment(input: {subjectId: "1", body: "hi"}) { clientMutationId } }',
            "GraphQL mutation field 'addComment' is not on the allow-list (REST-first policy): "
            "use POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
        ),
    ],
    ids=["pull-request-query", "disallowed-mutation"],
)
def test_a_refused_field_is_named_with_its_rest_route(document: str, message: str) -> None:
    assert refusal(document) == message


def test_an_alias_cannot_smuggle_a_field_past_the_allow_list() -> None:
    aliased = (
        'query { viewer: repository(owner: "o", name: "r") { issues(first: 5) { totalCount } } }'
    )
    assert re.search(
        r"'repository\.issues'.*use GET /repos/\{owner\}/\{repo\}/issues", refusal(aliased)
    )


def test_viewer_may_only_be_asked_who_it_is() -> None:
    asked = refusal("{ viewer { login repositories(first: 10) { nodes { name } } } }")
    assert re.search(r"'viewer\.repositories'.*GET /installation/repositories", asked)


def test_comments_and_strings_do_not_confuse_the_check() -> None:
    doc = '# repository { pullRequest }\nquery { viewer { login } rateLimit { cost } } # "}"'
    assert check_graphql(doc).fields == ("viewer", "rateLimit")


def test_fragments_and_subscriptions_are_refused() -> None:
    with pytest.raises(GraphQLNotAllowed, match="fragments are not allowed"):
        check_graphql("query { ...F } fragment F on Query { viewer { login } }")
    with pytest.raises(GraphQLNotAllowed, match="subscriptions are not allowed"):
        check_graphql("subscription { viewer { login } }")


def test_an_unknown_top_level_field_without_a_rest_twin_points_at_rest_in_general() -> None:
    with pytest.raises(
        GraphQLNotAllowed,
        match=r"'node' is not on the allow-list \(REST-first policy\): use the REST API$",
    ):
        check_graphql('{ node(id: "x") { id } }')


def test_review_threads_of_a_pull_request_are_the_one_repository_read_allowed() -> None:
    op = check_graphql(
        "query($o: String!, $n: String!, $p: Int!) { repository(owner: $o, name: $n) "
        "{ pullRequest(number: $p) { reviewThreads(first: 100) { nodes { id isResolved "
        "resolvedBy { login } } } } } }"
    )
    assert op.kind == "query" and op.fields == ("repository",)
    with pytest.raises(
        GraphQLNotAllowed, match=r"'repository\.pullRequest'.*pulls/\{pull_number\}"
    ):
        check_graphql(
            '{ repository(owner: "o", name: "r") '
            "{ pullRequest(number: 1) { reviewThreads(first: 1) { totalCount } title } } }"
        )
    with pytest.raises(GraphQLNotAllowed, match=r"'repository' is not on the allow-list"):
        check_graphql('{ repository(owner: "o", name: "r") { id } }')


def test_resolving_a_review_thread_is_allowed_as_a_mutation_that_creates_no_content() -> None:
    op = check_graphql(
        "mutation($thread: ID!) { resolveReviewThread(input: {threadId: $thread}) "
        "{ thread { id isResolved } } }"
    )
    assert op.kind == "mutation" and op.fields == ("resolveReviewThread",)
    assert not op.creates_content and op.primary_cost == 1
    from agents.ratelimit.github.limits import ThrottleLimits
    from agents.ratelimit.github.requests import classify_graphql

    spec = classify_graphql(is_mutation=True, creates_content=False, primary_cost=op.primary_cost)
    assert spec.is_write and spec.points == ThrottleLimits().graphql_mutation_points


def test_discoverys_listing_and_files_at_a_commit_are_allowed() -> None:
    from agents.github.pull_listing import PULLS_QUERY

    assert check_graphql(PULLS_QUERY).fields == ("repository",)
    files = (
        "query($o: String!, $n: String!, $e0: String!) { repository(owner: $o, name: $n) "
        "{ f0: object(expression: $e0) { __typename ... on Blob { text isBinary } } } }"
    )
    assert check_graphql(files).kind == "query"


def test_an_inline_fragment_cannot_smuggle_a_field_past_the_allow_list() -> None:
    hidden = (
        '{ ... on Query { repository(owner: "o", name: "r") { issues(first: 5) { totalCount } } } }'
    )
    assert re.search(r"'repository\.issues'.*/issues", refusal(hidden))
    beside = (
        '{ repository(owner: "o", name: "r") { pullRequests(first: 5) { totalCount } '
        "... on Repository { issues(first: 5) { totalCount } } } }"
    )
    assert "is not on the allow-list" in refusal(beside)  # the listing plus a field: refused
    with pytest.raises(GraphQLNotAllowed, match="fragments are not allowed"):
        check_graphql("{ viewer { ...Who } } fragment Who on User { login }")


def test_the_listing_asks_for_the_page_sizes_its_readers_count_on() -> None:
    from agents.github.pull_listing import (
        BLOB_FIELDS,
        LAST_REVIEWS,
        MAX_LABELS,
        PAGE_PULLS,
        PULLS_QUERY,
    )

    assert f"pullRequests(states: OPEN, first: {PAGE_PULLS}," in PULLS_QUERY
    assert f"reviews(last: {LAST_REVIEWS})" in PULLS_QUERY
    assert f"labels(first: {MAX_LABELS})" in PULLS_QUERY
    assert f"{{ {BLOB_FIELDS} }}" in PULLS_QUERY
