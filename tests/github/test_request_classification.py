from __future__ import annotations

import pytest

from agents.github import classify_graphql, classify_rest
from agents.ratelimit.github.requests import route_template


def test_a_pull_request_read_costs_one_core_point_and_names_its_route() -> None:
    spec = classify_rest("get", "/repos/octo/demo/pulls/42")
    assert spec.method == "GET"
    assert spec.route == "/repos/{owner}/{repo}/pulls/{pull_number}"
    assert spec.target == "/repos/octo/demo/pulls/42"
    assert (spec.resource, spec.primary_cost, spec.points) == ("core", 1, 1)
    assert not spec.is_write and not spec.is_content_creation


def test_posting_a_review_is_a_content_creating_write_costing_five_points() -> None:
    spec = classify_rest("POST", "/repos/octo/demo/pulls/42/reviews")
    assert spec.route == "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"
    assert spec.is_write and spec.is_content_creation
    assert spec.points == 5


@pytest.mark.parametrize(
    ("method", "path", "content"),
    [
        ("POST", "/repos/o/r/issues/3/comments", True),
        ("POST", "/repos/o/r/issues", True),
        ("POST", "/repos/o/r/issues/3/labels", False),
        ("PATCH", "/repos/o/r/issues/3", False),
    ],
)
def test_only_posts_that_create_comments_reviews_or_issues_count_as_content(
    method: str, path: str, content: bool
) -> None:
    assert classify_rest(method, path).is_content_creation is content


def test_file_paths_and_base_head_ranges_with_slashes_keep_one_template() -> None:
    assert (
        route_template("/repos/o/r/contents/src/pkg/mod.py")
        == "/repos/{owner}/{repo}/contents/{path}"
    )
    assert (
        route_template("/repos/o/r/compare/main...feature/x")
        == "/repos/{owner}/{repo}/compare/{basehead}"
    )


def test_unknown_routes_mask_numeric_ids_for_the_audit_log() -> None:
    assert (
        route_template("/repos/o/r/check-runs/123/annotations")
        == "/repos/o/r/check-runs/{id}/annotations"
    )


def test_rate_limit_endpoint_is_free_and_search_has_its_own_bucket() -> None:
    assert classify_rest("GET", "/rate_limit").primary_cost == 0
    assert classify_rest("GET", "/search/issues?q=x").resource == "search"
    assert classify_rest("GET", "/search/code").resource == "code_search"


def test_graphql_mutation_costs_five_secondary_points_and_a_query_one() -> None:
    assert classify_graphql(is_mutation=True, creates_content=True).points == 5
    query = classify_graphql(is_mutation=False, creates_content=False)
    assert (query.resource, query.points, query.is_write) == ("graphql", 1, False)


def test_an_unknown_http_method_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"unsupported HTTP method 'FETCH' for '/repos/o/r'"):
        classify_rest("FETCH", "/repos/o/r")
