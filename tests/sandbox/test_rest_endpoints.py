"""Every REST endpoint answers bodies githubkit's models parse, at / and under /api/v3."""

from __future__ import annotations

import base64

import pytest
from githubkit_schemas.latest.models import (
    ContentFile,
    DiffEntry,
    Issue,
    IssueComment,
    Label,
    PullRequestReview,
    PullRequestReviewComment,
    RateLimit,
)

from sandbox.github.seed import (
    GADGETS,
    GADGETS_PR_LARGE,
    WIDGETS_ISSUE_BUG,
    WIDGETS_PR_DEBUG_PRINT,
    WIDGETS_PR_PDB,
)
from sandbox.server import SandboxServer
from tests.sandbox.clients import items, mint, token_client


@pytest.fixture(params=["", "/api/v3"], ids=["root", "ghe-prefix"])
def base(request: pytest.FixtureRequest, sandbox: SandboxServer) -> str:
    prefix: str = request.param
    return sandbox.url + prefix


def test_repository_and_pull_listing_parse(sandbox: SandboxServer, base: str) -> None:
    gh = token_client(base, mint(base, sandbox.state))
    repo = gh.rest.repos.get("acme", "widgets").parsed_data
    assert repo.full_name == "acme/widgets"
    assert repo.default_branch == "main"
    pulls = gh.rest.pulls.list("acme", "widgets", state="open").parsed_data
    assert [p.number for p in pulls] == [3, 2, 1]
    assert all(len(p.head.sha) == 40 for p in pulls)


def test_pull_listing_pages_with_a_link_header(sandbox: SandboxServer, base: str) -> None:
    gh = token_client(base, mint(base, sandbox.state))
    first = gh.rest.pulls.list("acme", "widgets", per_page=2, page=1)
    assert [p.number for p in first.parsed_data] == [3, 2]
    assert 'rel="next"' in first.headers["link"] and "page=2" in first.headers["link"]
    second = gh.rest.pulls.list("acme", "widgets", per_page=2, page=2)
    assert [p.number for p in second.parsed_data] == [1]
    assert 'rel="prev"' in second.headers["link"]


def test_paginator_walks_every_changed_file_of_the_large_pull(
    sandbox: SandboxServer, base: str
) -> None:
    gh = token_client(base, mint(base, sandbox.state))
    files = items(
        list(
            gh.rest.paginate(
                gh.rest.pulls.list_files,
                owner="acme",
                repo="gadgets",
                pull_number=GADGETS_PR_LARGE,
                per_page=15,
            )
        ),
        DiffEntry,
    )
    assert len(files) == 40
    assert all(f.patch for f in files)


def test_pull_detail_and_files_carry_real_patches(sandbox: SandboxServer, base: str) -> None:
    gh = token_client(base, mint(base, sandbox.state))
    pull = gh.rest.pulls.get("acme", "widgets", WIDGETS_PR_DEBUG_PRINT).parsed_data
    assert pull.changed_files == 1 and pull.additions == 6 and pull.deletions == 0
    files = items(
        gh.rest.pulls.list_files("acme", "widgets", WIDGETS_PR_PDB).parsed_data, DiffEntry
    )
    assert {f.filename for f in files} == {"src/widgets/cache.py", "tests/test_cache.py"}
    cache = next(f for f in files if f.filename == "src/widgets/cache.py")
    assert isinstance(cache.patch, str) and cache.patch.startswith("@@ ")
    assert "+            import pdb; pdb.set_trace()" in cache.patch


def test_contents_come_base64_encoded_at_a_ref(sandbox: SandboxServer, base: str) -> None:
    gh = token_client(base, mint(base, sandbox.state))
    head = sandbox.state.pull("acme/widgets", WIDGETS_PR_DEBUG_PRINT).pull
    assert head is not None
    content = gh.rest.repos.get_content(
        "acme", "widgets", "src/widgets/core.py", ref=head.head_sha
    ).parsed_data
    assert isinstance(content, ContentFile)
    assert "def scale(" in base64.b64decode(content.content).decode()
    on_main = gh.rest.repos.get_content("acme", "widgets", "CONTRIBUTING.md").parsed_data
    assert isinstance(on_main, ContentFile)
    assert "Every behaviour change comes with a test" in base64.b64decode(on_main.content).decode()
    listing = gh.rest.repos.get_content("acme", "widgets", "src/widgets").parsed_data
    assert isinstance(listing, list)
    assert {e.name for e in listing} == {"__init__.py", "core.py", "cache.py"}


def test_compare_lists_the_changed_files(sandbox: SandboxServer, base: str) -> None:
    gh = token_client(base, mint(base, sandbox.state))
    pull = sandbox.state.pull(GADGETS, 2).pull
    assert pull is not None
    cmp = gh.rest.repos.compare_commits("acme", "gadgets", f"main...{pull.head_sha}").parsed_data
    assert cmp.ahead_by == 1 and cmp.status == "ahead"
    assert [f.filename for f in cmp.files or []] == ["src/gadgets/client.py"]


def test_review_with_inline_comments_is_recorded_with_its_author(
    sandbox: SandboxServer, base: str
) -> None:
    gh = token_client(base, mint(base, sandbox.state))
    review = gh.rest.pulls.create_review(
        "acme",
        "widgets",
        WIDGETS_PR_DEBUG_PRINT,
        data={
            "body": "Two leftovers.",
            "event": "COMMENT",
            "comments": [
                {"path": "src/widgets/core.py", "line": 26, "side": "RIGHT", "body": "debug print"},
                {"path": "src/widgets/core.py", "position": 8, "body": "TODO left in"},
            ],
        },
    ).parsed_data
    assert review.state == "COMMENTED"
    assert review.user is not None and review.user.login == "swarm-reviewer[bot]"
    reviews = items(
        gh.rest.pulls.list_reviews("acme", "widgets", WIDGETS_PR_DEBUG_PRINT).parsed_data,
        PullRequestReview,
    )
    assert [r.id for r in reviews] == [review.id]
    comments = items(
        gh.rest.pulls.list_review_comments("acme", "widgets", WIDGETS_PR_DEBUG_PRINT).parsed_data,
        PullRequestReviewComment,
    )
    assert [(c.path, c.line, c.body) for c in comments] == [
        ("src/widgets/core.py", 26, "debug print"),
        ("src/widgets/core.py", None, "TODO left in"),
    ]
    assert comments[0].diff_hunk.endswith('+    print(f"scaling {widget.name} by {factor}")')


def test_issues_comments_and_labels_parse(sandbox: SandboxServer, base: str) -> None:
    gh = token_client(base, mint(base, sandbox.state))
    issues = items(gh.rest.issues.list_for_repo("acme", "widgets").parsed_data, Issue)
    assert {i.number for i in issues} == {1, 2, 3, 4, 5}
    assert {i.number for i in issues if not i.pull_request} == {4, 5}
    issue = gh.rest.issues.get("acme", "widgets", WIDGETS_ISSUE_BUG).parsed_data
    assert [lbl.name for lbl in issue.labels if not isinstance(lbl, str)] == ["bug"]
    created = gh.rest.issues.create_comment(
        "acme", "widgets", WIDGETS_ISSUE_BUG, body="Reproduced."
    ).parsed_data
    assert created.user is not None and created.user.login == "swarm-reviewer[bot]"
    listed = items(
        gh.rest.issues.list_comments("acme", "widgets", WIDGETS_ISSUE_BUG).parsed_data,
        IssueComment,
    )
    assert [c.body for c in listed] == ["Reproduced."]
    labels = items(
        gh.rest.issues.add_labels(
            "acme", "widgets", WIDGETS_ISSUE_BUG, data={"labels": ["triaged"]}
        ).parsed_data,
        Label,
    )
    assert [lbl.name for lbl in labels] == ["bug", "triaged"]


def test_user_and_rate_limit_parse_for_a_pat(sandbox: SandboxServer, base: str) -> None:
    gh = token_client(base, sandbox.state.maintainer_pat)
    assert gh.rest.users.get_authenticated().parsed_data.login == "octo-maintainer"
    overview = gh.rest.rate_limit.get().parsed_data
    assert overview.resources.core.limit == 5000
    graphql = overview.resources.graphql
    assert isinstance(graphql, RateLimit) and graphql.limit == 5000
