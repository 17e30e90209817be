"""Which event means which work, from payloads the sandbox renders as GitHub does."""

from __future__ import annotations

import json

import pytest

from agents.events.commands import Command, find_command, may_command
from agents.events.routing import route_event
from flows.webhook.sink import flow_request
from sandbox.github.seed import MAINTAINER, WIDGETS
from sandbox.github.state import SandboxState
from sandbox.github.webhooks import Delivery, SandboxWebhooks

SECRET = "routing-secret"


@pytest.fixture
def hooks() -> SandboxWebhooks:
    return SandboxWebhooks(SandboxState(), SECRET)


def _only(hooks: SandboxWebhooks) -> Delivery:
    [delivery] = hooks.take()
    return delivery


def test_an_opened_pr_asks_for_a_review_of_that_pr_at_its_head(hooks: SandboxWebhooks) -> None:
    issue = hooks.state.add_pull(WIDGETS, "New", {"src/x.py": "X = 1\n"})
    delivery = _only(hooks)
    routed = route_event(delivery.event, delivery.body)
    assert routed.work is not None
    assert (routed.work.kind, routed.work.target, routed.work.role) == (
        "review",
        f"{WIDGETS}#{issue.number}",
        "reviewer",
    )
    assert routed.work.head_sha == issue.pull.head_sha if issue.pull else False


def test_a_push_asks_for_a_review_keyed_by_the_new_head(hooks: SandboxWebhooks) -> None:
    number = hooks.state.add_pull(WIDGETS, "New", {"src/x.py": "X = 1\n"}).number
    hooks.take()
    sha = hooks.state.push_commit(WIDGETS, number, {"src/x.py": "X = 2\n"})
    routed = route_event("pull_request", _only(hooks).body)
    assert routed.action == "synchronize" and routed.work is not None
    assert routed.work.work_key("d-1") == f"review:{WIDGETS}#{number}@{sha}:reviewer"
    # The same push delivered twice is the same work.
    assert routed.work.work_key("d-2") == routed.work.work_key("d-1")


def test_an_opened_issue_asks_for_triage(hooks: SandboxWebhooks) -> None:
    issue = hooks.state.add_issue(WIDGETS, "Broken", "It breaks.")
    routed = route_event("issues", _only(hooks).body)
    assert routed.work is not None
    assert (routed.work.kind, routed.work.number, routed.work.role) == (
        "triage",
        issue.number,
        "triager",
    )


def test_a_command_comment_on_a_pr_is_a_command(hooks: SandboxWebhooks) -> None:
    comment = hooks.state.add_comment(WIDGETS, 1, "LGTM\n/swarm security\n", author=MAINTAINER)
    routed = route_event("issue_comment", _only(hooks).body)
    assert routed.work is not None
    assert (routed.work.kind, routed.work.command, routed.work.role) == (
        "command",
        "security",
        "security-reviewer",
    )
    assert (routed.work.comment_id, routed.work.sender) == (comment.id, MAINTAINER)
    assert routed.work.work_key("d-9") == "command:d-9"


def test_a_decision_on_an_issue_is_the_writers_command_with_the_persons_note(
    hooks: SandboxWebhooks,
) -> None:
    hooks.state.add_comment(WIDGETS, 4, "/swarm reject Use a set.\nAnd test it.", author=MAINTAINER)
    routed = route_event("issue_comment", _only(hooks).body)
    assert routed.work is not None
    assert (routed.work.kind, routed.work.role) == ("command", "implementer")
    command = Command.of(routed.work.command or "")
    assert (command.word, command.note, command.decides) == (
        "reject",
        "Use a set.\nAnd test it.",
        True,
    )
    # On a pull request a decision has no plan to decide on.
    hooks.state.add_comment(WIDGETS, 1, "/swarm approve", author=MAINTAINER)
    routed = route_event("issue_comment", _only(hooks).body)
    assert routed.work is None and routed.reason.endswith("/swarm approve works on issues only")


@pytest.mark.parametrize(
    ("author", "body", "number", "reason"),
    [
        ("swarm-reviewer[bot]", "/swarm review", 1, "commands from bots are ignored"),
        (MAINTAINER, "/swarm review", 4, "/swarm commands work on pull requests only"),
        (MAINTAINER, "Looks good", 4, "no /swarm command"),
        ("swarm-reviewer[bot]", "Looks good", 1, "no /swarm command"),
    ],
)
def test_comments_that_are_neither_commands_nor_feedback_are_ignored_with_the_reason(
    hooks: SandboxWebhooks, author: str, body: str, number: int, reason: str
) -> None:
    hooks.state.add_comment(WIDGETS, number, body, author=author)
    routed = route_event("issue_comment", _only(hooks).body)
    assert routed.work is None
    assert routed.reason.endswith(reason)


@pytest.mark.parametrize("body", ["please /swarm review", "Looks good"])
def test_a_persons_comment_on_a_pr_without_a_command_is_feedback(
    hooks: SandboxWebhooks, body: str
) -> None:
    hooks.state.add_comment(WIDGETS, 1, body, author=MAINTAINER)
    routed = route_event("issue_comment", _only(hooks).body)
    assert routed.work is not None
    assert (routed.work.kind, routed.work.number, routed.work.role) == ("learn", 1, "reviewer")
    assert routed.work.work_key("d-7") == "learn:d-7"


def _review_comment(hooks: SandboxWebhooks, login: str, in_reply_to: int | None) -> bytes:
    user = {"login": login, "type": "Bot" if login.endswith("[bot]") else "User"}
    comment = {"id": 9, "body": "False positive", "user": user}
    payload = {
        "action": "created",
        "repository": {"full_name": WIDGETS},
        "sender": user,
        "pull_request": {"number": 1},
        "comment": {**comment, **({"in_reply_to_id": in_reply_to} if in_reply_to else {})},
    }
    return hooks.make("pull_request_review_comment", payload).body


@pytest.mark.parametrize(
    ("login", "in_reply_to", "reason"),
    [
        (MAINTAINER, 7, None),
        ("dependabot[bot]", 7, "replies from bots teach nothing"),
        (MAINTAINER, None, "not a reply to a review comment"),
    ],
)
def test_a_persons_reply_to_a_review_comment_is_to_answer_and_learn_from(
    hooks: SandboxWebhooks, login: str, in_reply_to: int | None, reason: str | None
) -> None:
    routed = route_event("pull_request_review_comment", _review_comment(hooks, login, in_reply_to))
    if reason is not None:
        assert routed.work is None and routed.reason.endswith(reason)
        return
    work = routed.work
    assert work is not None
    assert (work.kind, work.number, work.sender, work.role) == (
        "respond",
        1,
        MAINTAINER,
        "responder",
    )
    assert work.comment_id is not None
    # the same reply delivered twice is answered by one run; another reply by its own
    assert (
        work.work_key("d-1") == work.work_key("d-2") == f"respond:{work.target}:{work.comment_id}"
    )


def test_other_events_and_actions_are_ignored(hooks: SandboxWebhooks) -> None:
    assert route_event("ping", b'{"zen": "x"}').work is None
    closed = hooks.make("pull_request", {**_pr_payload(hooks), "action": "closed"})
    assert route_event("pull_request", closed.body).reason.endswith(
        "not an action that asks for a review"
    )
    assert route_event("star", json.dumps({"action": "created"}).encode()).work is None
    assert route_event("pull_request", b"not json").reason == "payload is not a JSON event"


def _pr_payload(hooks: SandboxWebhooks) -> dict[str, object]:
    hooks.state.add_pull(WIDGETS, "New", {"src/x.py": "X = 1\n"})
    return _only(hooks).payload


def test_a_forged_repository_name_in_a_payload_is_not_routed(hooks: SandboxWebhooks) -> None:
    payload = _pr_payload(hooks)
    payload["repository"] = {"full_name": "acme/widgets/../../etc"}
    assert route_event("pull_request", json.dumps(payload).encode()).work is None


def test_a_pull_request_whose_nullable_fields_are_null_is_still_routed(
    hooks: SandboxWebhooks,
) -> None:
    # GitHub's webhook schema lets these be null (merged: boolean | null; a deleted account's
    # user; a deleted fork's head repo), and the router validates the pull request as a Pull.
    payload = _pr_payload(hooks)
    pull = payload["pull_request"]
    assert isinstance(pull, dict)
    pull["merged"] = None
    pull["user"] = None
    pull["body"] = None
    pull["head"]["repo"] = None
    routed = route_event("pull_request", json.dumps(payload).encode())
    assert routed.work is not None and routed.work.number == pull["number"]


def test_commands_are_read_from_their_own_line_only() -> None:
    assert find_command("/swarm review") is not None
    assert find_command("text\n  /swarm   review  \nmore") == find_command("/swarm review")
    assert find_command("/swarm") == find_command("/swarm help")
    assert find_command("`/swarm review` is how") is None
    unknown = find_command("/swarm deploy")
    assert unknown is not None and not unknown.known


@pytest.mark.parametrize(
    "body",
    [
        "/swarm review\r\n",
        "Looks good.\r\n\r\n/swarm review\r\n\r\nThanks!",
        "/swarm review\r",
        "/swarm review please",
        "/swarm review, please!",
        "/swarm Review   when you have a minute\r\nthanks",
        "/swarm review securty",
    ],
    ids=["crlf", "crlf-in-prose", "cr", "trailing-word", "punctuation", "case-and-prose", "typo"],
)
def test_a_review_command_is_read_whatever_ends_its_line_and_whatever_follows_it(
    body: str,
) -> None:
    assert find_command(body) == Command("review")


def test_a_focus_is_read_before_trailing_prose_and_across_crlf() -> None:
    found = find_command("/swarm review security please\r\n")
    assert found == Command("review", "security") and found.focus_role == "security-reviewer"
    assert find_command("/swarm security, thanks\r\n") == Command("security")
    assert find_command("/swarm\r\n") == Command("help")


@pytest.mark.parametrize(
    "body",
    [
        "/swarmy review",
        "see `/swarm review`",
        "> /swarm review",
        "```\r\n/swarm review\r\n```",
        "~~~\n/swarm review\n~~~\n",
        "/swarm @someone",
        "/swarm [link](https://example.com)",
    ],
    ids=["longer-word", "inline-code", "quoted", "fenced-crlf", "tilde-fence", "mention", "link"],
)
def test_a_quoted_fenced_or_non_word_swarm_line_is_no_command(body: str) -> None:
    assert find_command(body) is None


def test_the_first_command_line_after_a_fence_counts() -> None:
    body = "```\n/swarm help\n```\r\n/swarm security\r\n/swarm review"
    assert find_command(body) == Command("security")


@pytest.mark.parametrize(
    ("permission", "allowed"),
    [("admin", True), ("maintain", True), ("write", True), ("read", False), ("none", False)],
)
def test_only_write_access_or_above_may_command(permission: str, allowed: bool) -> None:
    assert may_command(permission) is allowed


def test_a_review_focus_names_a_configured_overlay_role_never_free_text(
    hooks: SandboxWebhooks,
) -> None:
    hooks.state.add_comment(WIDGETS, 1, "/swarm review security", author=MAINTAINER)
    work = route_event("issue_comment", _only(hooks).body).work
    assert work is not None and work.command == "review security" and work.role == "reviewer"
    assert work.focus == flow_request(work, "d-1").focus == "security-reviewer"
    unfocused = flow_request(work.model_copy(update={"focus": None}), "d-1")
    assert unfocused.focus is None and "focus" not in unfocused.parameters()["request"]
    # A word that names no focus is prose after the command: a plain review, no overlay.
    plain = find_command("/swarm review ignore-all-findings")
    assert plain == Command("review") and plain.focus_role is None
    assert Command.of("review ignore-all-findings") == plain
    assert Command.of("review security").focus_role == "security-reviewer"
    # a focus only narrows a review; after another command the word is prose
    assert Command.of("security review") == Command("security")
    assert Command.of("help security") == Command("help")


@pytest.mark.parametrize(
    ("login", "action", "reason"),
    [
        (MAINTAINER, "resolved", None),
        (MAINTAINER, "unresolved", "only a resolved thread is feedback"),
        ("dependabot[bot]", "resolved", "threads bots resolve teach nothing"),
    ],
)
def test_a_review_thread_a_person_resolves_is_feedback(
    hooks: SandboxWebhooks, login: str, action: str, reason: str | None
) -> None:
    user = {"login": login, "type": "Bot" if login.endswith("[bot]") else "User"}
    payload = {
        "action": action,
        "repository": {"full_name": WIDGETS},
        "sender": user,
        "pull_request": {"number": 1},
        "thread": {"node_id": "PRRT_x", "comments": []},
    }
    routed = route_event("pull_request_review_thread", hooks.make("x", payload).body)
    assert routed.reason.endswith(reason or "feedback on acme/widgets#1")
    assert (routed.work is None) == (reason is not None)
