"""Review comment listings (a repository's and one pull request's) take GitHub's ``since``,
``sort`` and ``direction`` as githubkit sends them: the replies poll reads a repository's
comments since its oldest PR was opened and trusts that nothing of those PRs is left out."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from githubkit import GitHub
from githubkit.exception import RequestFailed
from githubkit_schemas.latest.models import PullRequestReviewComment

from sandbox.github.feedback import react, reply
from sandbox.github.seed import MAINTAINER, WIDGETS, WIDGETS_PR_DEBUG_PRINT
from sandbox.server import SandboxServer
from tests.sandbox.clients import items, mint, token_client

PR = WIDGETS_PR_DEBUG_PRINT
CORE = "src/widgets/core.py"


@pytest.fixture
def gh(sandbox: SandboxServer) -> GitHub[Any]:
    return token_client(sandbox.url, mint(sandbox.url, sandbox.state))


@pytest.fixture
def thread(sandbox: SandboxServer, gh: GitHub[Any]) -> tuple[int, int, datetime]:
    """A review comment, then a minute later a reply: (its id, the reply's id, between)."""
    gh.request(
        "POST",
        f"/repos/{WIDGETS}/pulls/{PR}/reviews",
        json={
            "event": "COMMENT",
            "body": "x",
            "comments": [{"path": CORE, "line": 27, "body": "a"}],
        },
    )
    [root] = sandbox.state.pull(WIDGETS, PR).pull.review_comments  # type: ignore[union-attr]
    sandbox.state.clock.advance(60)
    between = datetime.fromtimestamp(sandbox.state.clock.now() - 30, tz=UTC)
    answer = reply(sandbox.state, WIDGETS, root.id, "Why?", MAINTAINER)
    return root.id, answer, between


def _ids(listed: object) -> list[int]:
    return [c.id for c in items(listed, PullRequestReviewComment)]


def test_since_keeps_the_comments_updated_at_or_after_it_in_both_listings(
    gh: GitHub[Any], thread: tuple[int, int, datetime]
) -> None:
    (root, answer, between), pulls = thread, gh.rest.pulls
    assert _ids(pulls.list_review_comments_for_repo("acme", "widgets").parsed_data) == [
        root,
        answer,
    ]
    recent = pulls.list_review_comments_for_repo("acme", "widgets", since=between).parsed_data
    assert _ids(recent) == [answer]
    of_the_pr = pulls.list_review_comments("acme", "widgets", PR, since=between).parsed_data
    assert _ids(of_the_pr) == [answer]
    [newest] = items(recent, PullRequestReviewComment)
    exact = pulls.list_review_comments_for_repo("acme", "widgets", since=newest.created_at)
    assert _ids(exact.parsed_data) == [answer]  # "at or after": the very second counts


def test_sort_and_direction_order_the_listing_and_direction_alone_changes_nothing(
    gh: GitHub[Any], thread: tuple[int, int, datetime]
) -> None:
    (root, answer, _), pulls = thread, gh.rest.pulls
    newest = pulls.list_review_comments_for_repo(
        "acme", "widgets", sort="created", direction="desc"
    )
    assert _ids(newest.parsed_data) == [answer, root]
    oldest = pulls.list_review_comments_for_repo("acme", "widgets", sort="updated", direction="asc")
    assert _ids(oldest.parsed_data) == [root, answer]
    # GitHub ignores direction without sort: ascending ids.
    alone = pulls.list_review_comments_for_repo("acme", "widgets", direction="desc")
    assert _ids(alone.parsed_data) == [root, answer]
    of_the_pr = pulls.list_review_comments("acme", "widgets", PR, sort="created", direction="desc")
    assert _ids(of_the_pr.parsed_data) == [answer, root]


def test_a_since_that_is_not_a_time_is_refused(gh: GitHub[Any]) -> None:
    with pytest.raises(RequestFailed) as refused:
        gh.request("GET", f"/repos/{WIDGETS}/pulls/comments", params={"since": "yesterday"})
    assert refused.value.response.status_code == 422


def test_a_reply_stands_on_its_parents_lines_without_the_parents_reactions(
    sandbox: SandboxServer, gh: GitHub[Any]
) -> None:
    comment = {"path": CORE, "start_line": 26, "line": 27, "body": "these two lines"}
    gh.request(
        "POST",
        f"/repos/{WIDGETS}/pulls/{PR}/reviews",
        json={"event": "COMMENT", "body": "x", "comments": [comment]},
    )
    [root] = sandbox.state.pull(WIDGETS, PR).pull.review_comments  # type: ignore[union-attr]
    react(sandbox.state, WIDGETS, root.id, "+1", MAINTAINER)
    answer = reply(sandbox.state, WIDGETS, root.id, "Why?", MAINTAINER)
    listed = gh.rest.pulls.list_review_comments("acme", "widgets", PR).parsed_data
    shown = {c.id: c for c in items(listed, PullRequestReviewComment)}
    assert (shown[answer].path, shown[answer].start_line, shown[answer].line) == (CORE, 26, 27)
    assert shown[answer].in_reply_to_id == root.id
    [_, child] = sandbox.state.pull(WIDGETS, PR).pull.review_comments  # type: ignore[union-attr]
    assert [r.content for r in root.reactions] == ["+1"] and child.reactions == []
