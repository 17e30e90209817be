"""A resolved review thread is feedback: people resolve the bot's threads on the sandbox GitHub
through GraphQL with the real githubkit client, the next run reads `reviewThreads` as the bot,
and a resolution by someone with write access becomes a proposed acknowledgement, one that
never silences the finding (a resolved thread acknowledges, it does not dismiss)."""

from __future__ import annotations

from typing import Any

import pytest
from githubkit.exception import GraphQLFailed

from sandbox.github.feedback import reply
from sandbox.github.seed import MAINTAINER, REVIEWER_SLUG, WIDGETS, WIDGETS_PR_DEBUG_PRINT
from tests.events.harness import receiver_over
from tests.json_access import text as as_text
from tests.memory.real_worker import first_user_text
from tests.memory.test_feedback_learning import (
    cli,
    learn,
    reported,
    rereview,
    reviewed,
)
from tests.sandbox.clients import token_client
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio

PR = WIDGETS_PR_DEBUG_PRINT
AUTHOR = "alice-dev"  # opened the PR; no write access on widgets in this test
THREADS = """
query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 50) {
        nodes { id isResolved resolvedBy { login } comments(first: 1) { nodes { databaseId } } }
      }
    }
  }
}
"""
RESOLVE = """
mutation($id: ID!) {
  resolveReviewThread(input: {threadId: $id}) { thread { id isResolved resolvedBy { login } } }
}
"""


async def resolve_as(swarm: Swarm, login: str, comment_id: int) -> dict[str, Any]:
    """``login`` resolves the thread of ``comment_id`` the way a person's client does."""
    gh = token_client(swarm.sandbox.url, swarm.sandbox.state.add_pat(login))
    owner, name = WIDGETS.split("/")
    data = await gh.async_graphql(THREADS, {"owner": owner, "name": name, "number": PR})
    threads = data["repository"]["pullRequest"]["reviewThreads"]["nodes"]
    thread = next(t for t in threads if t["comments"]["nodes"][0]["databaseId"] == comment_id)
    resolved = await gh.async_graphql(RESOLVE, {"id": thread["id"]})
    node: dict[str, Any] = resolved["resolveReviewThread"]["thread"]
    return node


async def test_a_thread_a_writer_resolves_becomes_an_acknowledgement_not_a_dismissal(
    backend_swarm: Swarm,
) -> None:
    swarm = backend_swarm
    printed, todo = await reviewed(swarm)
    thread = await resolve_as(swarm, MAINTAINER, printed.id)
    assert thread["isResolved"] and thread["resolvedBy"] == {"login": MAINTAINER}
    # GitHub lets the PR's author resolve threads on their PR; without write access it
    # teaches nothing. Someone who is neither may not resolve at all.
    await resolve_as(swarm, AUTHOR, todo.id)
    with pytest.raises(GraphQLFailed) as refused:
        await resolve_as(swarm, "carol-dev", todo.id)
    assert "does not have permission to resolve" in repr(refused.value)

    report = await learn(swarm)
    assert len(report.proposed) == 1 and report.accepted == []
    assert (AUTHOR, "none access, not write") in report.ignored
    assert (await learn(swarm)).proposed == []  # read twice, proposed once
    store = swarm.runtime.store
    (proposal,) = store.list_memories(repo=WIDGETS, states=("proposed",))
    assert proposal.body.startswith(
        f"@{MAINTAINER} (admin access) resolved the review thread of the finding"
    )
    assert proposal.body.endswith("acknowledged as useful, not dismissed")
    assert proposal.source and proposal.source["signal"] == "acknowledgement"
    assert as_text(proposal.source["comment_url"]).endswith(f"r{printed.id}")
    assert proposal.author == MAINTAINER and proposal.pr_number == PR

    cli("memory", "review", "--accept", str(proposal.id))
    requests, worker = await rereview(swarm, {"NOTES.md": "unrelated\n"})
    first = first_user_text(requests[0])
    assert "resolved the review thread of the finding" in first
    # an acknowledgement is not a dismissal: the same finding on unchanged code is reported
    # again (and not posted twice: its thread is there)
    said = reported(swarm, worker)
    assert any("print(" in b for b in said), said


async def test_a_maintainers_resolution_waits_for_review_and_an_open_thread_teaches_nothing(
    backend_swarm: Swarm,
) -> None:
    swarm = backend_swarm
    printed, _ = await reviewed(swarm)
    await resolve_as(swarm, MAINTAINER, printed.id)
    # reopened: the thread is open again, and an open thread says nothing
    gh = token_client(swarm.sandbox.url, swarm.sandbox.state.maintainer_pat)
    owner, name = WIDGETS.split("/")
    data = await gh.async_graphql(THREADS, {"owner": owner, "name": name, "number": PR})
    (node,) = [
        t for t in data["repository"]["pullRequest"]["reviewThreads"]["nodes"] if t["isResolved"]
    ]
    await gh.async_graphql(
        "mutation($id: ID!) { unresolveReviewThread(input: {threadId: $id}) "
        "{ thread { isResolved } } }",
        {"id": node["id"]},
    )
    report = await learn(swarm, auto_accept=True)
    assert report.accepted == [] and report.proposed == []

    await resolve_as(swarm, MAINTAINER, printed.id)
    report = await learn(swarm, auto_accept=True)
    # Resolving says nothing of the finding's text (the model's): even a maintainer's waits.
    assert report.accepted == [] and len(report.proposed) == 1
    assert swarm.runtime.store.list_memories(repo=WIDGETS) == []
    (proposed,) = swarm.runtime.store.list_memories(repo=WIDGETS, states=("proposed",))
    assert proposed.source and proposed.source["via"] == "resolution"


async def test_a_resolution_delivered_by_webhook_is_learned_at_once_and_not_again_by_the_poll(
    backend_swarm: Swarm,
) -> None:
    swarm = backend_swarm
    printed, _ = await reviewed(swarm)
    async with receiver_over(swarm.sandbox, swarm.runtime.store) as events:
        thread = await resolve_as(swarm, MAINTAINER, printed.id)
        [delivery] = events.hooks.take()
        assert delivery.event == "pull_request_review_thread"
        assert delivery.payload["thread"]["node_id"] == thread["id"]
        assert delivery.payload["sender"]["login"] == MAINTAINER
        response = await events.post(delivery)
        assert (response.status_code, response.json()) == (202, {"status": "accepted"})
        await events.learner.drain()
    (proposal,) = swarm.runtime.store.list_memories(repo=WIDGETS, states=("proposed",))
    assert proposal.source and proposal.source["signal"] == "acknowledgement"
    assert proposal.body.startswith(f"@{MAINTAINER} (admin access) resolved the review thread")
    assert (await learn(swarm)).proposed == []  # the poll reads the same thread: no second one


async def test_a_person_whose_login_is_the_apps_slug_is_a_person_in_rest_and_a_bot_in_resolutions(
    backend_swarm: Swarm,
) -> None:
    """GraphQL names the App's bot by its slug (``swarm-reviewer``, no ``[bot]``), and a person
    may have that login. Where GitHub says who is who (REST: ``user.type``) the person teaches
    like anyone with write access; ``resolvedBy`` (typed User) cannot say, so a resolution
    under that login counts as the bot's and teaches nothing."""
    swarm = backend_swarm
    printed, todo = await reviewed(swarm, writer=REVIEWER_SLUG)
    reply(
        swarm.sandbox.state,
        WIDGETS,
        printed.id,
        "False positive: this print is the CLI's output.",
        REVIEWER_SLUG,
    )
    await resolve_as(swarm, REVIEWER_SLUG, todo.id)

    report = await learn(swarm)
    (proposal,) = swarm.runtime.store.list_memories(repo=WIDGETS, states=("proposed",))
    assert proposal.author == REVIEWER_SLUG and proposal.source
    assert proposal.source["signal"] == "dismissal"
    assert (REVIEWER_SLUG, "a bot") in report.ignored  # the resolution
