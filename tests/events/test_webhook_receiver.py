"""``POST /github/webhook`` as GitHub and as an attacker reach it: signed deliveries from the
sandbox, forged, unsigned, oversized and replayed ones, and commands from people without write
access. Each answer is checked with what it started (flow runs) and wrote (GitHub, store)."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import AsyncIterator

import pytest

from flows.run.request import RunRequest
from sandbox.github.model import IssueComment
from sandbox.github.seed import (
    MAINTAINER,
    READER,
    REVIEWER_BOT,
    WIDGETS,
    WIDGETS_PR_CLEAN,
    WRITER,
)
from sandbox.github.webhooks import Delivery
from tests.events.harness import SECRET, Events, events, sandbox_server

pytestmark = pytest.mark.anyio
__all__ = ["events", "sandbox_server"]


def _opened(events: Events) -> tuple[int, Delivery]:
    issue = events.state.add_pull(WIDGETS, "Add x", {"src/widgets/x.py": "X = 1\n"})
    [delivery] = events.hooks.take()
    return issue.number, delivery


async def test_a_signed_pr_opened_starts_one_review_run_for_that_pr(events: Events) -> None:
    number, delivery = _opened(events)
    response = await events.post(delivery)
    assert response.status_code == 202
    assert events.started.requests == [
        RunRequest(targets=(f"{WIDGETS}#{number}",), role="reviewer")
    ]
    record = events.store.get_delivery(delivery.delivery_id)
    # The run ended (the recording runner's): the row says so, and what the work was.
    assert record is not None and record.outcome == "done"
    assert (record.event, record.action, record.repo, record.number) == (
        "pull_request",
        "opened",
        WIDGETS,
        number,
    )
    assert record.detail == f"review {WIDGETS}#{number} as reviewer"
    assert record.finished_at is not None and record.claimed_until is None


async def test_health_answers_ok(events: Events) -> None:
    response = await events.client.get("http://swarm.test/healthz")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


@pytest.mark.parametrize(
    "signature",
    [
        None,
        "",
        "sha256=" + "0" * 64,
        "sha256=not-hex",
        "sha256=" + hmac.new(b"another-secret", b"x", hashlib.sha256).hexdigest(),
    ],
    ids=["missing", "empty", "zeros", "malformed", "other-secret"],
)
async def test_an_unsigned_or_forged_delivery_gets_401_with_no_detail_and_starts_nothing(
    events: Events, signature: str | None
) -> None:
    _, delivery = _opened(events)
    headers = {k: v for k, v in delivery.headers.items() if k != "X-Hub-Signature-256"}
    if signature is not None:
        headers["X-Hub-Signature-256"] = signature
    response = await events.client.post(
        "http://swarm.test/github/webhook", content=delivery.body, headers=headers
    )
    await events.enqueuer.drain()
    assert (response.status_code, response.content) == (401, b"")
    assert events.started.requests == []
    assert events.store.get_delivery(delivery.delivery_id) is None


async def test_a_valid_sha1_signature_is_refused_as_the_wrong_algorithm(events: Events) -> None:
    _, delivery = _opened(events)
    sha1 = "sha1=" + hmac.new(SECRET.encode(), delivery.body, hashlib.sha1).hexdigest()
    response = await events.post(delivery, **{"X-Hub-Signature-256": sha1})
    assert response.status_code == 401
    assert events.started.requests == []


async def test_a_body_with_a_changed_byte_fails_its_signature(events: Events) -> None:
    _, delivery = _opened(events)
    tampered = delivery.body.replace(b'"opened"', b'"reopened"')
    response = await events.client.post(
        "http://swarm.test/github/webhook", content=tampered, headers=delivery.headers
    )
    assert response.status_code == 401


async def test_an_oversized_body_is_refused_before_it_is_hashed_or_recorded(
    events: Events,
) -> None:
    big = events.hooks.make("pull_request", {"action": "opened", "pad": "x" * 70_000})
    response = await events.post(big)
    assert (response.status_code, response.content) == (413, b"")

    # Without a Content-Length (chunked), the cap holds while reading.
    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(big.body), 8192):
            yield big.body[start : start + 8192]

    headers = {k: v for k, v in big.headers.items() if k.lower() != "content-length"}
    streamed = await events.client.post(
        "http://swarm.test/github/webhook", content=chunks(), headers=headers
    )
    assert streamed.status_code == 413
    assert events.store.get_delivery(big.delivery_id) is None
    assert events.started.requests == []


async def test_a_redelivery_answers_200_and_starts_nothing_new(events: Events) -> None:
    _, delivery = _opened(events)
    assert (await events.post(delivery)).status_code == 202
    again = await events.post(delivery)
    assert (again.status_code, again.json()) == (200, {"status": "duplicate"})
    assert len(events.started.requests) == 1


async def test_a_captured_delivery_replayed_under_a_new_id_starts_nothing(events: Events) -> None:
    _, delivery = _opened(events)
    assert (await events.post(delivery)).status_code == 202
    replay = await events.post(delivery, **{"X-GitHub-Delivery": "ffffffff-0000-replayed"})
    assert (replay.status_code, replay.json()) == (200, {"status": "duplicate"})
    assert len(events.started.requests) == 1


async def test_two_deliveries_of_the_same_push_start_one_run(events: Events) -> None:
    number, first = _opened(events)
    second = events.hooks.make("pull_request", {**first.payload, "action": "reopened"})
    assert (await events.post(first)).status_code == 202
    assert (await events.post(second)).status_code == 202
    assert events.started.requests == [
        RunRequest(targets=(f"{WIDGETS}#{number}",), role="reviewer")
    ]


async def test_an_event_for_a_repository_this_swarm_does_not_serve_is_ignored(
    events: Events,
) -> None:
    events.state.add_repo("other/elsewhere", {"README.md": "hi\n"})
    events.state.add_pull("other/elsewhere", "x", {"a.py": "A = 1\n"})
    [delivery] = events.hooks.take()
    response = await events.post(delivery)
    assert response.status_code == 200
    assert response.json()["reason"] == "other/elsewhere is not a repository this swarm serves"
    assert events.started.requests == []


async def test_an_event_for_another_installation_is_ignored(events: Events) -> None:
    _, delivery = _opened(events)
    foreign = events.hooks.make("pull_request", {**delivery.payload, "installation": {"id": 9}})
    response = await events.post(foreign)
    assert (response.status_code, response.json()["status"]) == (200, "ignored")
    assert events.started.requests == []


async def test_an_unparseable_signed_body_is_ignored(events: Events) -> None:
    delivery = events.hooks.make("pull_request", {"action": "opened"})
    response = await events.post(delivery)
    assert (response.status_code, response.json()["status"]) == (200, "ignored")


@pytest.mark.parametrize("event", ["projects_v2_item", "projects_v2", "star", "workflow_run"])
async def test_a_valid_event_the_swarm_does_not_act_on_is_ignored_with_200(
    events: Events, event: str
) -> None:
    payload = {
        "action": "edited",
        "projects_v2_item": {"id": 136, "node_id": "PVTI_lADOAB", "content_type": "Issue"},
        "organization": {"login": "acme", "id": 3},
        "sender": {"login": MAINTAINER, "id": 1, "type": "User"},
        "installation": {"id": 2001, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMjAwMQ=="},
    }
    delivery = events.hooks.make(event, payload)
    response = await events.post(delivery)
    assert (response.status_code, response.json()["status"]) == (200, "ignored")
    record = events.store.get_delivery(delivery.delivery_id)
    assert record is not None and (record.event, record.outcome) == (event, "ignored")
    assert events.started.requests == []


@pytest.mark.parametrize("event", ["", "Pull_Request", "pull-request", "x" * 65, "../etc"])
async def test_a_malformed_event_name_is_a_400(events: Events, event: str) -> None:
    _, delivery = _opened(events)
    response = await events.post(delivery, **{"X-GitHub-Event": event})
    assert response.status_code == 400
    assert events.store.get_delivery(delivery.delivery_id) is None


async def test_a_delivery_without_event_or_id_headers_is_a_400(events: Events) -> None:
    _, delivery = _opened(events)
    response = await events.post(delivery, **{"X-GitHub-Delivery": "../../etc"})
    assert response.status_code == 400
    assert events.started.requests == []


def _comment(
    events: Events, body: str, author: str, number: int = WIDGETS_PR_CLEAN
) -> tuple[IssueComment, Delivery]:
    comment = events.state.add_comment(WIDGETS, number, body, author=author)
    [delivery] = events.hooks.take()
    return comment, delivery


def _forced_review(comment: IssueComment, delivery: Delivery) -> RunRequest:
    """The run a writer's ``/swarm review`` on the clean PR asks for."""
    return RunRequest(
        targets=(f"{WIDGETS}#{WIDGETS_PR_CLEAN}",),
        role="reviewer",
        force=True,
        rerun_id=delivery.delivery_id,
        ack_comment=comment.id,
    )


async def test_swarm_review_from_a_writer_is_acknowledged_and_runs_forced(events: Events) -> None:
    comment, delivery = _comment(events, "/swarm review", WRITER)
    assert (await events.post(delivery)).status_code == 202
    assert events.started.requests == [_forced_review(comment, delivery)]
    assert comment.reactions == [(REVIEWER_BOT, "eyes")]


async def test_swarm_review_typed_in_the_web_editor_with_crlf_and_prose_starts_the_review(
    events: Events,
) -> None:
    # GitHub's web editor ends lines with CRLF; people add words after the command.
    body = "Rebased on main.\r\n\r\n/swarm review please\r\n\r\nThanks!"
    comment, delivery = _comment(events, body, WRITER)
    assert delivery.payload["comment"]["body"] == body
    assert b"\\r\\n/swarm review please\\r\\n" in delivery.body
    response = await events.post(delivery)
    assert response.status_code == 202
    assert events.started.requests == [_forced_review(comment, delivery)]
    assert comment.reactions == [(REVIEWER_BOT, "eyes")]
    record = events.store.get_delivery(delivery.delivery_id)
    assert record is not None and record.outcome == "done"  # its (recording) run ended


async def test_a_crlf_review_security_command_lays_the_security_focus_over_the_review(
    events: Events,
) -> None:
    _, delivery = _comment(events, "/swarm review security\r\n", MAINTAINER)
    await events.post(delivery)
    [request] = events.started.requests
    assert (request.role, request.focus) == ("reviewer", "security-reviewer")


async def test_swarm_security_runs_the_security_reviewer(events: Events) -> None:
    _, delivery = _comment(events, "/swarm security", MAINTAINER)
    await events.post(delivery)
    assert [r.role for r in events.started.requests] == ["security-reviewer"]


@pytest.mark.parametrize(
    "who",
    [READER, "carol-dev", "mallory-unknown"],
    ids=["read-only collaborator", "pr author without access", "unknown user"],
)
async def test_a_command_without_write_access_starts_nothing_and_writes_nothing(
    events: Events, who: str
) -> None:
    # carol-dev opened the seeded clean PR: being its author grants no command.
    assert events.state.pull(WIDGETS, WIDGETS_PR_CLEAN).user_login == "carol-dev"
    if who not in events.state.users:
        events.state.add_user(who)
    comment, delivery = _comment(events, "/swarm review", who)
    response = await events.post(delivery)
    assert response.status_code == 202
    assert events.started.requests == []
    assert comment.reactions == []
    assert events.bot_writes() == []
    record = events.store.get_delivery(delivery.delivery_id)
    assert record is not None and record.outcome == "refused"


async def test_a_command_from_a_bot_is_ignored_before_any_github_call(events: Events) -> None:
    _, delivery = _comment(events, "/swarm review", REVIEWER_BOT)
    response = await events.post(delivery)
    assert (response.status_code, response.json()["status"]) == (200, "ignored")
    assert events.started.requests == []
    assert events.state.requests_by(REVIEWER_BOT) == []


async def test_a_command_on_an_issue_is_ignored(events: Events) -> None:
    _, delivery = _comment(events, "/swarm review", MAINTAINER, number=4)
    response = await events.post(delivery)
    assert response.json()["reason"].endswith("/swarm commands work on pull requests only")
    assert events.started.requests == []


async def test_swarm_help_replies_with_the_commands_and_starts_nothing(events: Events) -> None:
    _, delivery = _comment(events, "/swarm help", WRITER)
    await events.post(delivery)
    assert events.started.requests == []
    replies = [
        c.body
        for c in events.state.repo(WIDGETS).issues[WIDGETS_PR_CLEAN].comments
        if c.user_login == REVIEWER_BOT
    ]
    assert len(replies) == 1 and "`/swarm review`" in replies[0]


async def test_an_unknown_command_gets_a_short_reply_and_a_confused_reaction(
    events: Events,
) -> None:
    comment, delivery = _comment(events, "/swarm deploy", WRITER)
    await events.post(delivery)
    assert events.started.requests == []
    assert comment.reactions == [(REVIEWER_BOT, "confused")]
    [reply] = [
        c.body
        for c in events.state.repo(WIDGETS).issues[WIDGETS_PR_CLEAN].comments
        if c.user_login == REVIEWER_BOT
    ]
    assert reply.startswith("Unknown command `/swarm deploy`.")


async def test_an_opened_issue_starts_a_triage_run(events: Events) -> None:
    issue = events.state.add_issue(WIDGETS, "Crash", "It crashes")
    [delivery] = events.hooks.take()
    await events.post(delivery)
    assert events.started.requests == [
        RunRequest(targets=(f"{WIDGETS}#{issue.number}",), role="triager")
    ]


async def test_the_webhook_secret_never_reaches_the_store(events: Events) -> None:
    _, delivery = _opened(events)
    await events.post(delivery)
    for record in events.store.list_deliveries():
        assert SECRET not in json.dumps(record.__dict__, default=str)
