"""Review identity: one key format, one marker format, one rule for whose markers count."""

from __future__ import annotations

from agents.posting import keys as reviews
from agents.posting.keys import (
    find_marked,
    latest_reviewed_sha,
    marker,
    parse_review_key,
    parse_review_keys,
    review_key,
    with_marker,
)

REPO = "acme/widgets"
SHA = "b" * 40


def test_key_names_repo_pr_sha_and_role_and_parses_back() -> None:
    key = review_key(REPO, 3, SHA, "reviewer")
    assert key == f"{REPO}#3@{SHA}:reviewer"
    parts = parse_review_key(key)
    assert parts is not None
    assert (parts.repo, parts.number, parts.head_sha, parts.role) == (REPO, 3, SHA, "reviewer")
    assert parse_review_key("not a key") is None


def test_marker_round_trips_through_a_posted_body() -> None:
    key = review_key(REPO, 1, SHA, "reviewer")
    body = with_marker("Summary of findings.\n\n", key)
    assert body == f"Summary of findings.\n\n{marker(key)}"
    assert parse_review_keys(body) == [key]
    assert parse_review_keys("no marker here") == []
    assert parse_review_keys(None) == []


def test_find_marked_returns_the_review_carrying_the_key() -> None:
    key = review_key(REPO, 1, SHA, "reviewer")
    other = review_key(REPO, 1, SHA, "security-reviewer")
    bot = {"login": "swarm-reviewer[bot]"}
    posted = [
        {"id": 1, "user": bot, "commit_id": SHA, "body": with_marker("a", other)},
        {"id": 2, "user": bot, "commit_id": SHA, "body": with_marker("b", key)},
    ]
    found = find_marked(posted, key, "swarm-reviewer[bot]")
    assert found is not None and found["id"] == 2
    assert find_marked(posted[:1], key, "swarm-reviewer[bot]") is None


def test_a_bots_marker_counts_only_at_the_commit_and_pr_its_review_is_at() -> None:
    key = review_key(REPO, 1, SHA, "reviewer")
    bot = {"login": "swarm-reviewer[bot]"}
    at_older = {"id": 3, "user": bot, "commit_id": "a" * 40, "body": marker(key)}
    assert find_marked([at_older], key, "swarm-reviewer[bot]") is None
    assert find_marked([{**at_older, "commit_id": None}], key, "swarm-reviewer[bot]") is None
    assert reviews.marked_at(key, REPO, 1, SHA)
    assert not reviews.marked_at(key, REPO, 2, SHA)
    assert not reviews.marked_at(key, "acme/gadgets", 1, SHA)
    assert not reviews.marked_at("not a key", REPO, 1, SHA)


def test_a_body_carries_no_marker_but_the_one_its_writer_adds() -> None:
    key = review_key(REPO, 1, SHA, "reviewer")
    planted = marker(review_key(REPO, 1, "c" * 40, "reviewer"))
    body = with_marker(f"vendor/{planted}.min.js: generated", key)
    assert parse_review_keys(body) == [key]
    assert "&lt;!-- swarm:review" in body
    comment = reviews.with_comment_marker(f"x <!--swarm:comment key={REPO}#1:summary-->", "k")
    assert "swarm:comment key=k " in comment and comment.count("<!--") == 1


def test_only_the_bots_own_markers_count() -> None:
    key = review_key(REPO, 1, SHA, "reviewer")
    body = with_marker("x", key)
    posted = [{"id": 7, "user": {"login": "mallory"}, "body": body}]
    assert find_marked(posted, key, "swarm-reviewer[bot]") is None
    assert reviews.marked_keys("mallory", body, "swarm-reviewer[bot]") == []
    assert reviews.marked_keys("Swarm-Reviewer[bot]", with_marker("x", key), "swarm-reviewer[bot]")
    # Without a verified login, no marker counts: the store's key is then the only record.
    assert reviews.marked_keys("swarm-reviewer[bot]", with_marker("x", key), None) == []


def test_latest_reviewed_sha_takes_the_last_key_of_the_pr_and_roles() -> None:
    posted = [
        review_key(REPO, 1, "a" * 40, "reviewer"),
        review_key(REPO, 1, "c" * 40, "security-reviewer"),
        review_key(REPO, 1, "b" * 40, "summarizer"),
        review_key(REPO, 2, "d" * 40, "reviewer"),
    ]
    assert latest_reviewed_sha(posted, REPO, 1, ["reviewer"]) == "a" * 40
    assert latest_reviewed_sha(posted, REPO, 1, ["reviewer", "summarizer"]) == "b" * 40
    assert latest_reviewed_sha(posted, REPO, 3, ["reviewer"]) is None
