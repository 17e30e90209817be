"""The sandbox GitHub models what the writer identity needs, each as GitHub does it (the sources
are named where the sandbox models them: seed.py, routes_git.py, graphql_commits.py,
render_pulls.verification, state.label_issue): a second App, labels and their event, branches,
signed commits through createCommitOnBranch, the tarball, and draft pull requests."""

from __future__ import annotations

import base64
import io
import tarfile
from typing import Any

import httpx
import pytest
from githubkit import GitHub
from githubkit.exception import RequestFailed
from githubkit.webhooks import parse_obj
from githubkit_schemas.latest.types import ReposOwnerRepoPullsPostBodyType

from agents.github.pull_listing import PULLS_QUERY
from sandbox.github.seed import (
    MAINTAINER,
    READER,
    REVIEWER_APP_ID,
    REVIEWER_INSTALLATION_ID,
    WIDGETS,
    WIDGETS_ISSUE_BUG,
    WRITER,
    WRITER_APP_ID,
    WRITER_BOT,
    WRITER_INSTALLATION_ID,
    WRITER_PERMISSIONS,
)
from sandbox.github.webhooks import SandboxWebhooks
from sandbox.server import SandboxServer
from tests.sandbox.clients import app_client, mint, token_client

BRANCH = "swarm/issue-4"
COMMIT = """
mutation($input: CreateCommitOnBranchInput!) {
  createCommitOnBranch(input: $input) { commit { oid url } ref { name target { oid } } }
}
"""


def _writer(sandbox: SandboxServer) -> GitHub[Any]:
    return token_client(sandbox.url, sandbox.state.mint_token(WRITER_INSTALLATION_ID))


def _head(sandbox: SandboxServer, branch: str = "main") -> str:
    return sandbox.state.repo(WIDGETS).branches[branch]


def _commit_input(branch: str, expected: str, files: dict[str, str]) -> dict[str, Any]:
    additions = [
        {"path": path, "contents": base64.b64encode(text.encode()).decode()}
        for path, text in files.items()
    ]
    return {
        "input": {
            "branch": {"repositoryNameWithOwner": WIDGETS, "branchName": branch},
            "message": {"headline": "Refuse a zero size", "body": "Closes #4"},
            "fileChanges": {"additions": additions},
            "expectedHeadOid": expected,
        }
    }


def _graphql(gh: GitHub[Any], query: str, variables: dict[str, Any]) -> dict[str, Any]:
    """The whole answer, errors and all (GitHub answers a failed mutation with HTTP 200)."""
    response = gh.request("POST", "/graphql", json={"query": query, "variables": variables})
    body: dict[str, Any] = response.json()
    return body


def _branch_with_commit(sandbox: SandboxServer, gh: GitHub[Any]) -> str:
    gh.rest.git.create_ref(
        "acme", "widgets", data={"ref": f"refs/heads/{BRANCH}", "sha": _head(sandbox)}
    )
    answer = _graphql(gh, COMMIT, _commit_input(BRANCH, _head(sandbox), {"FIX.md": "fixed\n"}))
    oid: str = answer["data"]["createCommitOnBranch"]["commit"]["oid"]
    return oid


def test_the_writer_app_is_an_identity_of_its_own(sandbox: SandboxServer) -> None:
    writer_app = app_client(sandbox.url, sandbox.state, WRITER_APP_ID)
    app = writer_app.rest.apps.get_authenticated()
    assert app.parsed_data is not None and app.parsed_data.slug == "swarm-writer"
    token = mint(
        sandbox.url,
        sandbox.state,
        app_id=WRITER_APP_ID,
        installation_id=WRITER_INSTALLATION_ID,
        permissions={"contents": "write"},
    )
    assert sandbox.state.tokens[token].login == WRITER_BOT
    comment = token_client(sandbox.url, sandbox.state.mint_token(WRITER_INSTALLATION_ID))
    made = comment.rest.issues.create_comment(
        "acme", "widgets", WIDGETS_ISSUE_BUG, data={"body": "on it"}
    )
    assert made.parsed_data.user is not None and made.parsed_data.user.login == WRITER_BOT
    # The reviewer's App cannot mint for the writer's installation, nor the writer for its.
    reviewer_app = app_client(sandbox.url, sandbox.state, REVIEWER_APP_ID)
    with pytest.raises(RequestFailed) as refused:
        reviewer_app.rest.apps.create_installation_access_token(WRITER_INSTALLATION_ID)
    assert refused.value.response.status_code == 404
    with pytest.raises(RequestFailed):
        writer_app.rest.apps.create_installation_access_token(REVIEWER_INSTALLATION_ID)
    assert sandbox.state.installations[WRITER_INSTALLATION_ID].permissions == WRITER_PERMISSIONS


def test_a_label_added_sends_issues_labeled_naming_the_label_and_who_added_it(
    sandbox: SandboxServer,
) -> None:
    hooks = SandboxWebhooks(sandbox.state, "secret")
    pat = token_client(sandbox.url, sandbox.state.maintainer_pat)
    pat.rest.issues.add_labels(
        "acme", "widgets", WIDGETS_ISSUE_BUG, data={"labels": ["swarm:implement"]}
    )
    sandbox.state.label_issue(WIDGETS, WIDGETS_ISSUE_BUG, "swarm:implement", by=READER)  # again
    sandbox.state.label_issue(WIDGETS, WIDGETS_ISSUE_BUG, "later", by=READER)
    labeled = [d.payload for d in hooks.pending if d.payload.get("action") == "labeled"]
    assert [(p["label"]["name"], p["sender"]["login"]) for p in labeled] == [
        ("swarm:implement", MAINTAINER),
        ("later", READER),
    ]
    assert labeled[0]["issue"]["number"] == WIDGETS_ISSUE_BUG
    # Shaped as GitHub's published webhook schema has it (githubkit's models are generated
    # from it): a field GitHub always sends and the sandbox left out would fail here.
    for payload in labeled:
        event = parse_obj("issues", payload)
        assert getattr(event, "action", None) == "labeled"
    hooks.close()


def test_collaborator_permission_tells_a_reader_from_a_writer(sandbox: SandboxServer) -> None:
    repo = sandbox.state.repo(WIDGETS)
    repo.collaborators.update({WRITER: "write", READER: "read", "carol-dev": "triage"})
    gh = _writer(sandbox)
    route = "/repos/acme/widgets/collaborators/{}/permission"
    seen = {
        login: gh.request("GET", route.format(login)).json()
        for login in (WRITER, READER, "carol-dev", "dave-dev")
    }
    assert {k: (v["permission"], v["role_name"]) for k, v in seen.items()} == {
        WRITER: ("write", "write"),
        READER: ("read", "read"),
        "carol-dev": ("read", "triage"),
        "dave-dev": ("none", "none"),
    }


def test_open_issues_with_a_label_are_listed_and_pull_requests_among_them_say_so(
    sandbox: SandboxServer,
) -> None:
    state = sandbox.state
    state.label_issue(WIDGETS, WIDGETS_ISSUE_BUG, "swarm:implement", by=MAINTAINER)
    state.label_issue(WIDGETS, 1, "swarm:implement", by=MAINTAINER)  # a pull request
    gh = _writer(sandbox)
    params = {"labels": "swarm:implement", "state": "open"}
    listed = gh.request("GET", "/repos/acme/widgets/issues", params=params).json()
    assert [(i["number"], "pull_request" in i) for i in listed] == [
        (WIDGETS_ISSUE_BUG, False),
        (1, True),
    ]


def test_a_branch_is_created_once_and_read_back(sandbox: SandboxServer) -> None:
    gh, head = _writer(sandbox), _head(sandbox)
    made = gh.rest.git.create_ref(
        "acme", "widgets", data={"ref": f"refs/heads/{BRANCH}", "sha": head}
    )
    assert made.status_code == 201 and made.parsed_data.object_.sha == head
    assert gh.rest.git.get_ref("acme", "widgets", f"heads/{BRANCH}").parsed_data.object_.sha == head
    for sha, message in ((head, "Reference already exists"), ("f" * 40, "Object does not exist")):
        with pytest.raises(RequestFailed) as refused:
            ref = f"refs/heads/{BRANCH}" if sha == head else "refs/heads/other"
            gh.rest.git.create_ref("acme", "widgets", data={"ref": ref, "sha": sha})
        assert refused.value.response.status_code == 422
        assert refused.value.response.json()["message"] == message
    with pytest.raises(RequestFailed) as missing:
        gh.rest.git.get_ref("acme", "widgets", "heads/nothing-here")
    assert missing.value.response.status_code == 404
    reviewer = token_client(sandbox.url, sandbox.state.mint_token(REVIEWER_INSTALLATION_ID))
    with pytest.raises(RequestFailed) as forbidden:
        reviewer.rest.git.create_ref("acme", "widgets", data={"ref": "refs/heads/x", "sha": head})
    assert forbidden.value.response.status_code == 403


def test_create_commit_on_branch_signs_the_writers_commit_and_moves_the_branch(
    sandbox: SandboxServer,
) -> None:
    gh = _writer(sandbox)
    oid = _branch_with_commit(sandbox, gh)
    assert _head(sandbox, BRANCH) == oid
    page = gh.rest.repos.get_commit("acme", "widgets", oid).parsed_data
    assert getattr(page.author, "login", None) == WRITER_BOT
    verification = page.commit.verification
    assert getattr(verification, "verified", None) is True
    assert getattr(verification, "reason", None) == "valid"
    assert page.commit.message == "Refuse a zero size\n\nCloses #4"
    text = gh.rest.repos.get_content("acme", "widgets", "FIX.md", ref=BRANCH).parsed_data
    assert base64.b64decode(getattr(text, "content", "")).decode() == "fixed\n"
    # A commit pushed the ordinary way is unsigned.
    base = gh.rest.repos.get_commit("acme", "widgets", _head(sandbox)).parsed_data
    assert getattr(base.commit.verification, "reason", None) == "unsigned"


def test_create_commit_on_branch_refuses_a_stale_head_and_a_token_without_contents_write(
    sandbox: SandboxServer,
) -> None:
    gh, head = _writer(sandbox), _head(sandbox)
    oid = _branch_with_commit(sandbox, gh)
    stale = _graphql(gh, COMMIT, _commit_input(BRANCH, head, {"B.md": "b\n"}))
    assert stale["data"]["createCommitOnBranch"] is None
    assert stale["errors"][0]["type"] == "STALE_DATA"
    assert stale["errors"][0]["message"] == (
        f'Expected branch to point to "{head}" but it did not.  Pull and try again.'
    )
    reviewer = token_client(sandbox.url, sandbox.state.mint_token(REVIEWER_INSTALLATION_ID))
    refused = _graphql(reviewer, COMMIT, _commit_input(BRANCH, oid, {"B.md": "b\n"}))
    assert refused["errors"][0]["type"] == "FORBIDDEN"
    assert refused["errors"][0]["message"] == "Resource not accessible by integration"
    assert _head(sandbox, BRANCH) == oid


def test_the_tarball_redirects_to_an_archive_of_the_ref_that_lapses(
    sandbox: SandboxServer,
) -> None:
    token = sandbox.state.mint_token(WRITER_INSTALLATION_ID)
    with httpx.Client(base_url=sandbox.url) as http:
        answer = http.get(
            "/repos/acme/widgets/tarball/main", headers={"Authorization": f"Bearer {token}"}
        )
        assert answer.status_code == 302
        location = answer.headers["location"]
        archive = http.get(location)  # no credential: the link carries its own
        assert archive.status_code == 200
        with tarfile.open(fileobj=io.BytesIO(archive.content), mode="r:gz") as tar:
            names = tar.getnames()
        tops = {name.split("/", 1)[0] for name in names}
        assert len(tops) == 1
        paths = {name.split("/", 1)[1] for name in names}
        assert paths == set(sandbox.state.repo(WIDGETS).commits[_head(sandbox)].tree)
        sandbox.state.clock.advance(301)
        assert http.get(location).status_code == 404


def test_a_draft_pull_request_is_opened_once_and_found_again_by_its_head(
    sandbox: SandboxServer,
) -> None:
    gh = _writer(sandbox)
    hooks = SandboxWebhooks(sandbox.state, "secret")
    _branch_with_commit(sandbox, gh)
    data: ReposOwnerRepoPullsPostBodyType = {
        "title": "Refuse a zero size",
        "head": BRANCH,
        "base": "main",
        "body": "Closes #4",
        "draft": True,
    }
    made = gh.rest.pulls.create("acme", "widgets", data=data).parsed_data
    assert (made.draft, made.user.login if made.user else None, made.body) == (
        True,
        WRITER_BOT,
        "Closes #4",
    )
    with pytest.raises(RequestFailed) as again:
        gh.rest.pulls.create("acme", "widgets", data=data)
    assert again.value.response.status_code == 422
    assert again.value.response.json()["errors"][0]["message"] == (
        f"A pull request already exists for acme:{BRANCH}."
    )
    files = gh.request("GET", f"/repos/acme/widgets/pulls/{made.number}/files").json()
    assert [(f["filename"], f["status"]) for f in files] == [("FIX.md", "added")]
    found = gh.rest.pulls.list("acme", "widgets", head=f"acme:{BRANCH}", state="open").parsed_data
    assert [p.number for p in found] == [made.number]
    assert gh.rest.pulls.list("acme", "widgets", head="acme:other", state="open").parsed_data == []
    opened = [d.payload for d in hooks.pending if d.event == "pull_request"]
    assert [(p["action"], p["pull_request"]["draft"]) for p in opened] == [("opened", True)]
    hooks.close()


def test_a_pull_request_needs_a_commit_the_base_lacks(sandbox: SandboxServer) -> None:
    gh = _writer(sandbox)
    gh.rest.git.create_ref(
        "acme", "widgets", data={"ref": "refs/heads/empty", "sha": _head(sandbox)}
    )
    with pytest.raises(RequestFailed) as refused:
        gh.rest.pulls.create(
            "acme", "widgets", data={"title": "t", "head": "empty", "base": "main"}
        )
    assert (
        refused.value.response.json()["errors"][0]["message"] == "No commits between main and empty"
    )


def test_the_reviewers_listing_shows_the_writers_draft(sandbox: SandboxServer) -> None:
    gh = _writer(sandbox)
    _branch_with_commit(sandbox, gh)
    data: ReposOwnerRepoPullsPostBodyType = {
        "title": "Fix",
        "head": BRANCH,
        "base": "main",
        "body": "Closes #4",
        "draft": True,
    }
    number = gh.rest.pulls.create("acme", "widgets", data=data).parsed_data.number
    reviewer = token_client(sandbox.url, sandbox.state.mint_token(REVIEWER_INSTALLATION_ID))
    variables = {
        "owner": "acme",
        "name": "widgets",
        "after": None,
        "config": "HEAD:.github/swarm.yaml",
    }
    listing = _graphql(reviewer, PULLS_QUERY, variables)["data"]["repository"]["pullRequests"]
    node = next(n for n in listing["nodes"] if n["number"] == number)
    assert node["isDraft"] is True and node["author"]["login"] == "swarm-writer"


READY = """mutation($pull: ID!) {
  markPullRequestReadyForReview(input: {pullRequestId: $pull}) { pullRequest { isDraft } }
}"""


def _draft(sandbox: SandboxServer, gh: GitHub[Any]) -> Any:
    _branch_with_commit(sandbox, gh)
    data: ReposOwnerRepoPullsPostBodyType = {
        "title": "Refuse a zero size",
        "head": BRANCH,
        "base": "main",
        "body": "Closes #4",
        "draft": True,
    }
    return gh.rest.pulls.create("acme", "widgets", data=data).parsed_data


def test_a_pull_requests_body_is_replaced_by_patch_and_needs_pull_requests_write(
    sandbox: SandboxServer,
) -> None:
    gh = _writer(sandbox)
    made = _draft(sandbox, gh)
    path = f"/repos/acme/widgets/pulls/{made.number}"

    changed = gh.request("PATCH", path, json={"body": "Closes #4.\n\nRound 1."}).json()

    assert (changed["body"], changed["title"], changed["draft"]) == (
        "Closes #4.\n\nRound 1.",
        "Refuse a zero size",
        True,
    )
    assert gh.request("GET", path).json()["body"] == "Closes #4.\n\nRound 1."
    reader = token_client(
        sandbox.url,
        sandbox.state.mint_token(
            WRITER_INSTALLATION_ID, permissions={"pull_requests": "read", "metadata": "read"}
        ),
    )
    with pytest.raises(RequestFailed) as refused:
        reader.request("PATCH", path, json={"body": "x"})
    assert refused.value.response.status_code == 403


def test_mark_ready_for_review_turns_a_draft_into_a_pull_request_ready_for_review(
    sandbox: SandboxServer,
) -> None:
    gh = _writer(sandbox)
    made = _draft(sandbox, gh)

    answer = _graphql(gh, READY, {"pull": made.node_id})

    assert answer["data"]["markPullRequestReadyForReview"]["pullRequest"]["isDraft"] is False
    assert gh.request("GET", f"/repos/acme/widgets/pulls/{made.number}").json()["draft"] is False
