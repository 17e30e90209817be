"""Which GitHub event means which work. Pure: a payload in, an :class:`EventWork` or a reason
to ignore it out; nothing is called and nothing is trusted beyond the signature already checked.

- ``pull_request`` opened, reopened, synchronize, ready_for_review: review that PR (whether a
  draft is reviewed is the repository's ``skip.drafts``, decided by discovery);
- ``issue_comment`` created with a ``/swarm`` line, by someone who is not a bot, on what the
  command's kind works on (a PR, or an issue for a kind that works on issues): that command (who
  may give it is checked later, against GitHub);
- ``issues`` opened: triage it with the triage kind's role;
- ``pull_request_review_comment`` created as a reply, by someone who is not a bot: a reply to
  answer (the respond kind's role's, when it is in one of the bot's threads and its author has write
  access) and feedback, learned from as below;
- ``issue_comment`` created on a PR without a command, by someone who is not a bot: feedback,
  learned from (replies to the bot's review comments and reactions on them: GitHub sends no
  event for a reaction, so a new comment on the PR is when they are read); whether the bot
  reviewed that PR at all, and who may teach or be answered, are decided later;
- ``pull_request_review_thread`` resolved, by someone who is not a bot: feedback too (whose
  thread it was and who resolved it are read back from GitHub by the learner);
- anything else: ignored, with the reason.

Which role takes the work is the role book's answer (:mod:`agents.kinds.book`): the role whose
kind answers it, or the one whose ``command:`` is the ``/swarm`` word; no role is named here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from agents.events.commands import find_command
from agents.events.payloads import (
    Account,
    Envelope,
    IssueCommentEvent,
    IssuesEvent,
    PullRequestEvent,
    ReviewCommentEvent,
    ReviewThreadEvent,
)
from agents.github.models import head_sha
from agents.kinds.book import RoleBook
from agents.kinds.kind import Route as Route  # a kind's own routes, declared with the kind
from agents.roles.files import shipped_book

REVIEW_ACTIONS = frozenset({"opened", "reopened", "synchronize", "ready_for_review"})
# The events the swarm acts on (everything :func:`route_event` does not ignore), each with the
# repository permission a GitHub App needs, at least to read, to be sent it: what an App made
# for the swarm subscribes to (``swarm app create``).
EVENTS_ACTED_ON: dict[str, str] = {
    "pull_request": "pull_requests",
    "issue_comment": "issues",
    "issues": "issues",
    "pull_request_review_comment": "pull_requests",
    "pull_request_review_thread": "pull_requests",
}
# Each of those events as GitHub's App settings page names it (Permissions & events, "Subscribe
# to events"): what the docs tell a person to tick, and what ``swarm verify`` names when missing.
EVENT_TITLES: dict[str, str] = {
    "pull_request": "Pull request",
    "issue_comment": "Issue comment",
    "issues": "Issues",
    "pull_request_review_comment": "Pull request review comment",
    "pull_request_review_thread": "Pull request review thread",
}
# The work the events above ask for; a kind's own routes (:class:`Route`) may name more.
WorkKind = Literal["review", "command", "triage", "learn", "respond"]


class EventWork(BaseModel):
    """One piece of work an event asks for. Plain data: it becomes flow parameters."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str  # a WorkKind, or the work a kind's own route names
    repo: str
    number: int
    role: str
    sender: str
    head_sha: str | None = None
    comment_id: int | None = None
    command: str | None = None
    # A command's focus: the role laid over the review's calls (a call overlay).
    focus: str | None = None
    installation_id: int | None = None

    @property
    def target(self) -> str:
        return f"{self.repo}#{self.number}"

    def work_key(self, delivery_id: str) -> str:
        """The idempotency key of the flow run: the same push reviewed once, whichever of its
        deliveries arrives; a command or a new issue once per delivery."""
        if self.kind == "review" and self.head_sha:
            return f"review:{self.target}@{self.head_sha}:{self.role}"
        if self.kind == "respond" and self.comment_id:
            return f"respond:{self.target}:{self.comment_id}"
        return f"{self.kind}:{delivery_id}"


@dataclass(frozen=True)
class Routed:
    """What an event became: work, or None with the reason it is ignored."""

    event: str
    action: str | None
    repo: str | None
    number: int | None
    sender: str | None
    work: EventWork | None
    reason: str
    # Signed but not a delivery GitHub could have sent (not JSON, nested past any real payload,
    # numbers past GitHub's 64-bit ids): refused as a bad request, never looked into further.
    malformed: bool = False


# GitHub's ids are 64-bit; a larger integer is no GitHub payload, and it would overflow every
# integer column and index it reached.
_INT_MAX = 2**63 - 1


def _bounded_int(text: str) -> int:
    value = int(text)
    if abs(value) > _INT_MAX:
        raise ValueError("integer out of range")
    return value


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def decode_payload(body: bytes) -> object:
    """A delivery's JSON, or :class:`ValueError` for anything GitHub would never send.

    Nesting too deep for the decoder (``RecursionError``), integers beyond 64 bits and the
    non-standard ``NaN``/``Infinity`` all count as malformed, so no caller meets them later.
    """
    try:
        return json.loads(body, parse_int=_bounded_int, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError("payload nested too deep") from None


def route_event(event: str, body: bytes, roles: RoleBook | None = None) -> Routed:
    """The work ``event`` with payload ``body`` asks for, or why it asks for none; ``roles``
    says which role takes it (default: the roles shipped with swarm)."""
    try:
        raw = decode_payload(body)
        head = Envelope.model_validate(raw)
    except (ValueError, ValidationError):
        return Routed(event, None, None, None, None, None, "payload is not a JSON event", True)
    repo = head.repository.full_name if head.repository else None
    sender = head.sender.login if head.sender else None
    base = Routed(event, head.action, repo, None, sender, None, "")
    try:
        return _route(event, raw, head, base, roles or shipped_book())
    except ValidationError:
        return _ignored(base, f"{event}.{head.action}: payload lacks the fields this event needs")


def _ignored(base: Routed, reason: str, number: int | None = None) -> Routed:
    return Routed(base.event, base.action, base.repo, number, base.sender, None, reason)


def _work(base: Routed, work: EventWork, reason: str) -> Routed:
    return Routed(base.event, base.action, base.repo, work.number, base.sender, work, reason)


@dataclass(frozen=True)
class Delivery:
    """One event as its handler reads it; ``name`` (``event.action``) starts every reason."""

    name: str
    raw: object
    head: Envelope
    base: Routed
    repo: str
    sender: Account
    installation: int | None
    book: RoleBook

    def ignored(self, reason: str, number: int | None = None) -> Routed:
        return _ignored(self.base, f"{self.name}: {reason}", number)

    def work(self, work: EventWork, reason: str) -> Routed:
        return _work(self.base, work, f"{self.name}: {reason}")

    def answering(self, kind: str, number: int) -> str | Routed:
        """The role whose kind takes ``kind`` work, or the delivery ignored: no role does."""
        role = self.book.answering(kind)
        return role if role is not None else self.ignored(f"no role does {kind} work", number)

    def asks(
        self, kind: str, number: int, role: str, sender: str | None = None, **details: Any
    ) -> EventWork:
        """Work on ``number`` in this delivery's repository, through its installation, for
        ``sender`` (the event's own sender unless said); ``details``: the rest of its fields."""
        return EventWork(
            kind=kind,
            repo=self.repo,
            number=number,
            role=role,
            sender=sender or self.sender.login,
            installation_id=self.installation,
            **details,
        )


def _route(event: str, raw: object, head: Envelope, base: Routed, book: RoleBook) -> Routed:
    name = f"{event}.{head.action}" if head.action else event
    if base.repo is None or head.sender is None:
        return _ignored(base, f"{name}: no repository or sender")
    installation = head.installation.id if head.installation else None
    delivery = Delivery(name, raw, head, base, base.repo, head.sender, installation, book)
    # An event or action the handlers below do not take may be a configured kind's own.
    own = next(
        (
            route.handler
            for kind in book.kinds()
            for route in kind.routes
            if route.event == event and head.action in route.actions
        ),
        None,
    )
    if event not in _HANDLERS:
        return own(delivery) if own else delivery.ignored("not an event the swarm acts on")
    actions, otherwise, handler = _HANDLERS[event]
    if head.action not in actions:
        return own(delivery) if own else delivery.ignored(otherwise)
    return handler(delivery)


def _pull_request(d: Delivery) -> Routed:
    pr = PullRequestEvent.model_validate(d.raw).pull_request
    number, head = pr["number"], head_sha(pr)
    role = d.answering("review", number)
    if isinstance(role, Routed):
        return role
    work = d.asks("review", number, role, head_sha=head)
    return d.work(work, f"review {work.target}")


def _issue(d: Delivery) -> Routed:
    issue = IssuesEvent.model_validate(d.raw).issue
    if issue.pull_request is not None:
        return d.ignored("a pull request, not an issue", issue.number)
    role = d.answering("triage", issue.number)
    if isinstance(role, Routed):
        return role
    work = d.asks("triage", issue.number, role)
    return d.work(work, f"triage {work.target}")


def _comment(d: Delivery) -> Routed:
    parsed = IssueCommentEvent.model_validate(d.raw)
    number = parsed.issue.number
    command = find_command(parsed.comment.body, d.book)
    by_bot = _by_bot(parsed.comment.user, d.head)
    if command is None:
        if by_bot or parsed.issue.pull_request is None:
            return d.ignored("no /swarm command", number)
        return _learn(d, number, parsed.comment.user.login)
    if by_bot:
        return d.ignored("commands from bots are ignored", number)
    # A command works on what its role's kind works on (help and unknown words: on PRs).
    commanded = d.book.kind_of(command.role) if command.role else None
    on = commanded.on if commanded is not None else "pulls"
    if command.decides:
        on = "issues"  # a decision on the writer's plan, posted on its issue
    if on == "pulls" and parsed.issue.pull_request is None:
        return d.ignored("/swarm commands work on pull requests only", number)
    if on == "issues" and parsed.issue.pull_request is not None:
        return d.ignored(f"/swarm {command.word} works on issues only", number)
    # help and unknown words are answered by the sink; the review kind's role stands for them,
    # and the writer's role for a decision on its plan.
    role = command.role or d.answering("implement" if command.decides else "review", number)
    if isinstance(role, Routed):
        return role
    work = d.asks(
        "command",
        number,
        role,
        parsed.comment.user.login,
        comment_id=parsed.comment.id,
        command=command.text,
        focus=command.focus_role,
    )
    return d.work(work, f"/swarm {command.text} on {work.target}")


def _review_comment(d: Delivery) -> Routed:
    parsed = ReviewCommentEvent.model_validate(d.raw)
    number = parsed.pull_request.number
    if parsed.comment.in_reply_to_id is None:
        return d.ignored("not a reply to a review comment", number)
    if _by_bot(parsed.comment.user, d.head):
        return d.ignored("replies from bots teach nothing", number)
    work = _feedback(d, number, parsed.comment.user.login, parsed.comment.id)
    if isinstance(work, Routed):
        return work
    return d.work(work, f"a reply on {work.target}, to answer and learn from")


def _review_thread(d: Delivery) -> Routed:
    number = ReviewThreadEvent.model_validate(d.raw).pull_request.number
    if _by_bot(d.sender, d.head):
        return d.ignored("threads bots resolve teach nothing", number)
    return _learn(d, number, d.sender.login)


# Each event acted on: the actions that mean work, why any other action is ignored, its handler.
_HANDLERS: dict[str, tuple[frozenset[str], str, Callable[[Delivery], Routed]]] = {
    "pull_request": (REVIEW_ACTIONS, "not an action that asks for a review", _pull_request),
    "issue_comment": (frozenset({"created"}), "only new comments carry commands", _comment),
    "pull_request_review_comment": (
        frozenset({"created"}),
        "only new replies are feedback",
        _review_comment,
    ),
    "pull_request_review_thread": (
        frozenset({"resolved"}),
        "only a resolved thread is feedback",
        _review_thread,
    ),
    "issues": (frozenset({"opened"}), "only opened issues are triaged", _issue),
}


def _by_bot(author: Account, head: Envelope) -> bool:
    return author.is_bot or (head.sender is not None and head.sender.is_bot)


def _learn(d: Delivery, number: int, sender: str) -> Routed:
    work = _feedback(d, number, sender)
    if isinstance(work, Routed):
        return work
    return d.work(work, f"feedback on {work.target}")


def _feedback(
    d: Delivery, number: int, sender: str, reply: int | None = None
) -> EventWork | Routed:
    """Feedback on the PR to learn from; with ``reply``, also that reply to answer."""
    kind: WorkKind = "learn" if reply is None else "respond"
    role = d.answering(kind, number)
    if isinstance(role, Routed):
        return role
    if reply is None:
        return d.asks("learn", number, role, sender)
    return d.asks("respond", number, role, sender, comment_id=reply)
