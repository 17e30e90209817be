"""The sandbox's webhook deliveries carry what GitHub's do, for every event the swarm handles.

Each delivery is validated against githubkit's webhook models, which are generated from GitHub's
published webhook schema: a field GitHub always sends and the sandbox leaves out fails here (a
payload trimmed to what the router reads would prove nothing about a real one). Then each is
routed as the receiver routes it, and the App's own events (ping, installation) are answered by
the receiver with 200, ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from githubkit.webhooks import parse_obj

from agents.events.routing import route_event
from sandbox.github.feedback import grant, reply, resolve
from sandbox.github.model import ReviewComment
from sandbox.github.seed import GADGETS, MAINTAINER, REVIEWER_BOT, WIDGETS, WRITER
from sandbox.github.state import SandboxState
from sandbox.github.webhooks import Delivery, SandboxWebhooks
from tests.events.harness import Events, events, sandbox_server

pytestmark = pytest.mark.anyio
__all__ = ["events", "sandbox_server"]


@dataclass(frozen=True)
class Happened:
    """A delivery, with the work (or the reason to ignore it) the router should find in it."""

    delivery: Delivery
    kind: str | None
    reason: str


def _bot_finding(state: SandboxState, number: int) -> ReviewComment:
    """An inline comment of the bot's on the PR's first file, as a posted review leaves it."""
    pull = state.pull(WIDGETS, number).pull
    assert pull is not None
    first = pull.files[0]
    comment = ReviewComment(
        id=state.next_id(),
        review_id=state.next_id(),
        pull_number=number,
        path=first.filename,
        body="`print(` left in: use the logger.",
        commit_id=pull.head_sha,
        line=1,
        side="RIGHT",
        position=1,
        diff_hunk=(first.patch or "@@ -0,0 +1 @@").splitlines()[0],
        user_login=REVIEWER_BOT,
        at=state.clock.now(),
    )
    pull.review_comments.append(comment)
    return comment


def everything(hooks: SandboxWebhooks) -> list[Happened]:
    """One delivery of every event and action the swarm handles, as the sandbox makes them."""
    state = hooks.state
    grant(state, WIDGETS, MAINTAINER, "admin")
    seen: list[Happened] = []

    def took(kind: str | None, reason: str) -> None:
        [delivery] = hooks.take()
        seen.append(Happened(delivery, kind, reason))

    number = state.add_pull(WIDGETS, "Add x", {"src/widgets/x.py": "X = 1\n"}, draft=True).number
    took("review", f"pull_request.opened: review {WIDGETS}#{number}")
    state.push_commit(WIDGETS, number, {"src/widgets/x.py": "X = 2\n"})
    took("review", f"pull_request.synchronize: review {WIDGETS}#{number}")
    state.change_pull(WIDGETS, number, "ready_for_review")
    took("review", f"pull_request.ready_for_review: review {WIDGETS}#{number}")
    state.change_pull(WIDGETS, number, "closed")
    took(None, "pull_request.closed: not an action that asks for a review")
    state.change_pull(WIDGETS, number, "reopened")
    took("review", f"pull_request.reopened: review {WIDGETS}#{number}")
    # Typed in GitHub's web editor: CRLF line ends, words after the command.
    state.add_comment(WIDGETS, number, "Rebased.\r\n/swarm review please\r\n", author=WRITER)
    took("command", f"issue_comment.created: /swarm review on {WIDGETS}#{number}")
    state.add_comment(WIDGETS, number, "Thanks, that print was mine.\r\n", author=WRITER)
    took("learn", f"issue_comment.created: feedback on {WIDGETS}#{number}")
    finding = _bot_finding(state, number)
    reply(state, WIDGETS, finding.id, "Intended: this is the CLI's output.\r\n", MAINTAINER)
    took("respond", f"pull_request_review_comment.created: a reply on {WIDGETS}#{number}")
    resolve(state, WIDGETS, finding.id, MAINTAINER)
    took("learn", f"pull_request_review_thread.resolved: feedback on {WIDGETS}#{number}")
    resolve(state, WIDGETS, finding.id, MAINTAINER, resolved=False)
    took(None, "pull_request_review_thread.unresolved: only a resolved thread is feedback")
    issue = state.add_issue(WIDGETS, "Crash on start", "Steps:\r\n1. run it\r\n")
    took("triage", f"issues.opened: triage {WIDGETS}#{issue.number}")
    hooks.ping()
    took(None, "ping: no repository or sender")
    for action in ("created", "suspend", "unsuspend", "deleted"):
        hooks.installation(action, MAINTAINER)
        took(None, f"installation.{action}: no repository or sender")
    for added, removed in (([GADGETS], []), ([], [GADGETS])):
        action = "added" if added else "removed"
        hooks.installation_repositories(action, MAINTAINER, added, removed)
        took(None, f"installation_repositories.{action}: no repository or sender")
    return seen


@pytest.fixture(scope="module")
def happened() -> list[Happened]:
    return everything(SandboxWebhooks(SandboxState(), "payload-shapes"))


def _id(h: Happened) -> str:
    return f"{h.delivery.event}.{h.delivery.payload.get('action') or '-'}"


def test_every_event_and_action_the_swarm_handles_is_delivered(
    happened: list[Happened],
) -> None:
    names = {_id(h) for h in happened}
    for wanted in (
        "pull_request.opened",
        "pull_request.synchronize",
        "pull_request.reopened",
        "pull_request.ready_for_review",
        "pull_request.closed",
        "issue_comment.created",
        "issues.opened",
        "pull_request_review_comment.created",
        "pull_request_review_thread.resolved",
        "ping.-",
        "installation.created",
        "installation_repositories.added",
    ):
        assert wanted in names


def test_every_delivery_validates_against_githubs_webhook_schema(
    happened: list[Happened],
) -> None:
    failed = []
    for h in happened:
        try:
            parse_obj(h.delivery.event, h.delivery.payload)
        except ValueError as exc:
            failed.append(f"{_id(h)}: {str(exc)[:400]}")
    assert failed == []


def test_every_delivery_routes_to_its_work_or_its_reason(happened: list[Happened]) -> None:
    for h in happened:
        routed = route_event(h.delivery.event, h.delivery.body)
        assert not routed.malformed, _id(h)
        assert (routed.work.kind if routed.work else None, routed.reason[: len(h.reason)]) == (
            h.kind,
            h.reason,
        ), _id(h)


def test_a_synchronize_names_the_push_by_the_heads_before_and_after(
    happened: list[Happened],
) -> None:
    [push] = [h.delivery.payload for h in happened if _id(h) == "pull_request.synchronize"]
    assert push["after"] == push["pull_request"]["head"]["sha"] != push["before"]
    assert len(push["before"]) == len(push["after"]) == 40


async def test_the_apps_own_events_are_answered_200_ignored_and_start_nothing(
    events: Events,
) -> None:
    hooks = events.hooks
    deliveries = [
        hooks.ping(),
        hooks.installation("created", MAINTAINER),
        hooks.installation_repositories("added", MAINTAINER, [GADGETS], []),
        hooks.installation("deleted", MAINTAINER),
    ]
    hooks.take()
    for delivery in deliveries:
        response = await events.post(delivery)
        assert (response.status_code, response.json()["status"]) == (200, "ignored")
        record = events.store.get_delivery(delivery.delivery_id)
        assert record is not None and record.outcome == "ignored"
    assert events.started.requests == []
    assert events.bot_writes() == []
