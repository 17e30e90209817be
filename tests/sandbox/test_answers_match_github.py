"""The sandbox answers every REST endpoint the product calls as GitHub's REST description says.

The product's own calls (the runtime's minting and verification, then every REST helper of the
gateway) go to the sandbox, which keeps each answer's body; each body is then validated against
the model githubkit generates from GitHub's published REST description for that route. A route
the product calls with no model here fails the test, so a new endpoint cannot slip past.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from githubkit_schemas.latest.models import (
    CommitComparison,
    ContentDirectoryItems,
    ContentFile,
    DiffEntry,
    InstallationRepositoriesGetResponse200,
    InstallationToken,
    Integration,
    Issue,
    IssueComment,
    Label,
    PrivateUser,
    PullRequest,
    PullRequestReview,
    PullRequestReviewComment,
    RateLimitOverview,
    Reaction,
    RepositoryCollaboratorPermission,
)
from pydantic import TypeAdapter

from agents.github.endpoints import GitHubEndpoints
from agents.github.gateway import GitHubGateway
from agents.settings.model import load_settings
from agents.wiring import build_runtime
from flows.run.models import scripted_model
from sandbox.github.feedback import grant, react
from sandbox.github.seed import WIDGETS, WIDGETS_ISSUE_BUG, WIDGETS_PR_DEBUG_PRINT
from sandbox.server import SandboxServer
from tests.worker.conftest import settings_env

pytestmark = pytest.mark.anyio

_R = "/repos/{owner}/{repo}"
_PR = _R + "/pulls/{pull_number}"
# GitHub's model of each answer, by the route as GitHub's REST description names it.
MODELS: dict[tuple[str, str], Any] = {
    ("GET", "/app"): Integration,
    ("POST", "/app/installations/{installation_id}/access_tokens"): InstallationToken,
    ("GET", "/installation/repositories"): InstallationRepositoriesGetResponse200,
    ("GET", "/user"): PrivateUser,
    ("GET", "/rate_limit"): RateLimitOverview,
    ("GET", _PR): PullRequest,
    ("GET", _PR + "/files"): list[DiffEntry],
    ("GET", _PR + "/reviews"): list[PullRequestReview],
    ("POST", _PR + "/reviews"): PullRequestReview,
    ("GET", _PR + "/comments"): list[PullRequestReviewComment],
    ("GET", _R + "/pulls/comments"): list[PullRequestReviewComment],
    ("GET", _R + "/pulls/comments/{comment_id}/reactions"): list[Reaction],
    ("GET", _R + "/contents/{path}"): ContentFile | list[ContentDirectoryItems],
    ("GET", _R + "/compare/{basehead}"): CommitComparison,
    ("GET", _R + "/issues"): list[Issue],
    ("GET", _R + "/issues/{issue_number}"): Issue,
    ("GET", _R + "/issues/{issue_number}/comments"): list[IssueComment],
    ("POST", _R + "/issues/{issue_number}/comments"): IssueComment,
    ("PATCH", _R + "/issues/comments/{comment_id}"): IssueComment,
    ("POST", _PR + "/comments/{comment_id}/replies"): PullRequestReviewComment,
    ("POST", _R + "/issues/{issue_number}/labels"): list[Label],
    ("POST", _R + "/issues/comments/{comment_id}/reactions"): Reaction,
    ("GET", _R + "/collaborators/{username}/permission"): RepositoryCollaboratorPermission,
}
# Helpers that speak GraphQL (no REST model) or read no answer at all.
# GraphQL's answers are checked against GitHub's GraphQL schema (tests/run/test_graphql_schema.py).
NOT_REST = frozenset(
    {
        "graphql",
        "viewer_login",
        "list_review_threads",
        "resolve_review_thread",
        "snapshot",
        "list_open_pulls",
        "get_files",
    }
)
WRITE = {"pull_requests": "write", "issues": "write", "contents": "read", "metadata": "read"}


def _rest_helpers() -> set[str]:
    return {
        name
        for name, member in vars(GitHubEndpoints).items()
        if inspect.iscoroutinefunction(member) and not name.startswith("_")
    } - NOT_REST


async def _every_helper(sandbox: SandboxServer, gateway: GitHubGateway) -> set[str]:
    """Call each REST helper the way the product does; the names called."""
    state = sandbox.state
    pull = state.pull(WIDGETS, WIDGETS_PR_DEBUG_PRINT).pull
    assert pull is not None
    n = WIDGETS_PR_DEBUG_PRINT
    review = await gateway.create_review(
        WIDGETS,
        n,
        "Two leftovers.",
        commit_id=pull.head_sha,
        comments=[{"path": "src/widgets/core.py", "line": 26, "side": "RIGHT", "body": "print"}],
    )
    comment_id = pull.review_comments[-1].id
    react(state, WIDGETS, comment_id, "-1", "alice-dev")
    issue_comment = await gateway.create_issue_comment(WIDGETS, WIDGETS_ISSUE_BUG, "Reproduced.")
    calls: dict[str, Callable[[], Awaitable[object]]] = {
        "get_pull": lambda: gateway.get_pull(WIDGETS, n),
        "list_pull_files": lambda: gateway.list_pull_files(WIDGETS, n),
        "get_file": lambda: gateway.get_file(WIDGETS, "src/widgets/core.py", pull.head_sha),
        "compare": lambda: gateway.compare(WIDGETS, pull.base_sha, pull.head_sha),
        "list_reviews": lambda: gateway.list_reviews(WIDGETS, n),
        "add_labels": lambda: gateway.add_labels(WIDGETS, WIDGETS_ISSUE_BUG, ["triaged"]),
        "list_issues": lambda: gateway.list_issues(WIDGETS),
        "add_comment_reaction": lambda: gateway.add_comment_reaction(
            WIDGETS, int(issue_comment["id"]), "eyes"
        ),
        "list_issue_comments": lambda: gateway.list_issue_comments(WIDGETS, WIDGETS_ISSUE_BUG),
        "get_issue": lambda: gateway.get_issue(WIDGETS, WIDGETS_ISSUE_BUG),
        "list_repo_review_comments": lambda: gateway.list_repo_review_comments(WIDGETS),
        "read_repo_review_comments": lambda: gateway.read_repo_review_comments(
            WIDGETS, "2020-01-01T00:00:00Z"
        ),
        "list_pull_review_comments": lambda: gateway.list_pull_review_comments(WIDGETS, n),
        "list_review_comment_reactions": lambda: gateway.list_review_comment_reactions(
            WIDGETS, comment_id
        ),
        "collaborator_permission": lambda: gateway.collaborator_permission(WIDGETS, "maya-dev"),
        "update_issue_comment": lambda: gateway.update_issue_comment(
            WIDGETS, int(issue_comment["id"]), "Reproduced on 1.2."
        ),
        "reply_to_review_comment": lambda: gateway.reply_to_review_comment(
            WIDGETS, n, comment_id, "Fixed in the next push."
        ),
        "rate_limit": gateway.rate_limit,
    }
    for call in calls.values():
        await call()
    assert review["id"]
    return {"create_review", "create_issue_comment", *calls}


async def test_every_answer_the_product_reads_validates_against_githubs_models(
    sandbox: SandboxServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = sandbox.state
    state.knobs.keep_bodies = True
    grant(state, WIDGETS, "maya-dev", "maintain")
    settings_env(sandbox, tmp_path, monkeypatch)
    model = scripted_model()
    runtime = build_runtime(load_settings(), model.client, model.model_id)
    try:
        async with runtime.discovery("default", [WIDGETS], WRITE) as (gateway, login):
            assert login is not None
            called = await _every_helper(sandbox, gateway)
    finally:
        await runtime.aclose()
    # A bot account's token is verified with GET /user.
    with httpx.Client(base_url=sandbox.url) as client:
        client.get("/user", headers={"Authorization": f"token {state.bot_pat}"})
    assert called == _rest_helpers(), "every REST helper of the gateway is exercised here"

    answered = [r for r in state.requests if 200 <= r.status < 300 and r.body is not None]
    routes = {(r.method, r.route) for r in answered if r.route != "/graphql"}
    assert routes - MODELS.keys() == set(), "a route the product calls has no model here"
    for request in answered:
        if request.route == "/graphql":
            continue
        if request.media_type is not None:
            assert request.media_type.startswith("application/vnd.github.raw+json")
            assert isinstance(request.body, str)
            continue
        TypeAdapter(MODELS[(request.method, request.route)]).validate_python(request.body)
