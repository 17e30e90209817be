"""What the webhook receiver does with work, after it has answered GitHub.

A review or a triage becomes one ``swarm-run`` flow run for exactly that target. A command is
first checked against GitHub (the commenter needs write access; asked as the bot), then
acknowledged with an eyes reaction and run as a forced review; the flow adds rocket or confused
when it ends. ``/swarm help`` and unknown commands get a short reply instead of a run.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Protocol

from agents.events.commands import HELP_TEXT, Command, may_command
from agents.events.routing import EventWork
from agents.kinds.book import RoleBook
from agents.roles.files import shipped_book
from flows.run.request import RunRequest
from flows.webhook.app import Submitted

log = logging.getLogger("flows.events")


class CommandGitHub(Protocol):
    async def permission(self, repo: str, login: str) -> str: ...

    async def react(self, repo: str, comment_id: int, content: str) -> None: ...

    async def reply(self, repo: str, number: int, body: str) -> None: ...


class Decider(Protocol):
    async def __call__(
        self, repo: str, number: int, role: str, *, approve: bool, note: str
    ) -> str | None:
        """Resume the run waiting on the writer's plan for issue ``number`` with a decision;
        None when it was resumed, else why not (:func:`flows.run.gate.decide`)."""
        ...


class Enqueuer(Protocol):
    @property
    def runs_here(self) -> bool:
        """Whether the runs are this process's (False: a deployment's, Prefect's to run)."""
        ...

    async def enqueue(self, request: RunRequest, key: str, delivery: str | None = None) -> str:
        """Start (or find, for a key seen before) the flow run of ``delivery``'s work; its id."""
        ...


class Learner(Protocol):
    async def enqueue(self, parameters: dict[str, Any], key: str) -> str:
        """Queue the feedback on one PR for learning; an id for the delivery's row."""
        ...


def flow_request(work: EventWork, delivery_id: str) -> RunRequest:
    """The ``swarm-run`` request for ``work``: plain data, nothing secret."""
    if work.kind != "command":
        return RunRequest(targets=(work.target,), role=work.role)
    return RunRequest(
        targets=(work.target,),
        role=work.role,
        force=True,
        rerun_id=re.sub(r"[^A-Za-z0-9_.-]", "-", delivery_id)[:64],
        ack_comment=work.comment_id,
        focus=work.focus or None,
    )


class EventSink:
    """``learner``: where feedback is queued (in process, bounded; None: not learned from);
    ``roles``: which role a command word starts and which learns (default: the shipped roles)."""

    def __init__(
        self,
        enqueuer: Enqueuer,
        github: CommandGitHub,
        learner: Learner | None = None,
        roles: RoleBook | None = None,
        decider: Decider | None = None,
    ) -> None:
        self.enqueuer = enqueuer
        self.github = github
        self.learner = learner
        self.roles = roles or shipped_book()
        self.decider = decider

    async def submit(self, work: EventWork, delivery_id: str) -> Submitted:
        if work.kind == "respond":
            return await self._respond(work, delivery_id)
        if work.kind == "learn":
            return await self._learn(work, delivery_id)
        kind = self.roles.kind_of(work.role)
        if work.kind == "command" or (kind is not None and kind.writers_only):
            refused = await self._refusal(work)
            if refused is not None:
                return refused
        if work.kind == "command":
            command = Command.of(work.command or "help", self.roles)
            if command.decides:
                return await self._decide(work, command)
            if command.role is None:
                return await self._answer(work, command.known)
            assert work.comment_id is not None
            await self._acknowledge(work.repo, work.comment_id)
        run_id = await self.enqueuer.enqueue(
            flow_request(work, delivery_id), work.work_key(delivery_id), delivery_id
        )
        log.info("%s %s as %s: flow run %s", work.kind, work.target, work.role, run_id)
        return self._enqueued(f"{work.kind} {work.target} as {work.role}", run_id)

    async def _decide(self, work: EventWork, command: Command) -> Submitted:
        """``/swarm approve`` or ``/swarm reject NOTE`` from someone with write access (checked
        before): the run waiting on the writer's plan resumes with it; no new run starts."""
        assert work.comment_id is not None
        why: str | None
        if self.decider is None:
            why = "plan approval by comment is not set up here"
        else:
            why = await self.decider(
                work.repo,
                work.number,
                work.role,
                approve=command.word == "approve",
                note=command.note,
            )
        if why is not None:
            await self._tell(work, work.comment_id, f"`/swarm {command.word}`: {why}.")
            return Submitted("done", f"{command.word} on {work.target}: {why}")
        await self._acknowledge(work.repo, work.comment_id)
        log.info("%s on %s by %s: the waiting run resumes", command.word, work.target, work.sender)
        return Submitted("done", f"{command.word}d the plan on {work.target}")

    async def _tell(self, work: EventWork, comment_id: int, text: str) -> None:
        """Why a decision resumed nothing, as a reply and a confused reaction: a courtesy, like
        the eyes (the commands token may not comment on an issue); the delivery's row keeps it."""
        from agents.github.errors import GitHubApiError

        try:
            await self.github.reply(work.repo, work.number, text)
            await self.github.react(work.repo, comment_id, "confused")
        except GitHubApiError as exc:
            log.warning("%s: not told why nothing resumed: %s", work.target, exc)

    async def _acknowledge(self, repo: str, comment_id: int) -> None:
        """The eyes reaction that says a command was seen: a courtesy, so a reaction GitHub
        refuses does not stop the run (the commands token holds pull requests: write, and a
        comment on an issue, not a pull request, asks for issues: write)."""
        from agents.github.errors import GitHubApiError

        try:
            await self.github.react(repo, comment_id, "eyes")
        except GitHubApiError as exc:
            log.warning(
                "the command in comment %d of %s is not acknowledged: %s", comment_id, repo, exc
            )

    def _enqueued(self, detail: str, run_id: str) -> Submitted:
        handed_over = not self.enqueuer.runs_here
        return Submitted("enqueued", detail, run_id, handed_over=handed_over)

    async def _learn(
        self, work: EventWork, delivery_id: str, *, owns_row: bool = True
    ) -> Submitted:
        """Queue the PR's feedback for learning; the learner writes the delivery's outcome
        unless ``owns_row`` is False (a run started for the same delivery writes it)."""
        if self.learner is None:
            return Submitted("ignored", "learning from webhooks is not set up")
        learner = self.roles.answering("learn")
        if learner is None:
            return Submitted("ignored", "no role learns from feedback")
        params: dict[str, Any] = {"repo": work.repo, "number": work.number, "role": learner}
        if owns_row:
            params["delivery"] = delivery_id
        queued = await self.learner.enqueue(params, f"learn:{delivery_id}")
        return Submitted("enqueued", f"feedback on {work.target}", queued)

    async def _respond(self, work: EventWork, delivery_id: str) -> Submitted:
        """A reply in a review thread: learned from (as any feedback), and answered by a
        responder run when its author may be answered (write access, asked as the bot; the run
        checks again, and that it is one of the bot's own threads). When a run answers, its
        end is the delivery's outcome; otherwise the learning's is."""
        permission = await self.github.permission(work.repo, work.sender)
        answered = may_command(permission)
        learned = await self._learn(work, delivery_id, owns_row=not answered)
        if not answered:
            log.info(
                "reply on %s by %s (%s access): not answered", work.target, work.sender, permission
            )
            return learned
        run_id = await self.enqueuer.enqueue(
            flow_request(work, delivery_id), work.work_key(delivery_id), delivery_id
        )
        log.info("reply %s on %s: responder run %s", work.comment_id, work.target, run_id)
        return self._enqueued(f"answer on {work.target}; {learned.detail}", run_id)

    async def _refusal(self, work: EventWork) -> Submitted | None:
        permission = await self.github.permission(work.repo, work.sender)
        if may_command(permission):
            return None
        # Ignored without a reply: answering every read-only commenter would be a spam channel.
        log.info(
            "/swarm %s on %s by %s (%s access): ignored",
            work.command,
            work.target,
            work.sender,
            permission,
        )
        return Submitted("refused", f"{work.sender} has {permission} access; commands need write")

    async def _answer(self, work: EventWork, known: bool) -> Submitted:
        assert work.comment_id is not None
        if known:
            await self.github.reply(work.repo, work.number, HELP_TEXT)
            await self.github.react(work.repo, work.comment_id, "eyes")
            return Submitted("done", "help posted")
        await self.github.reply(
            work.repo, work.number, f"Unknown command `/swarm {work.command}`.\n\n{HELP_TEXT}"
        )
        await self.github.react(work.repo, work.comment_id, "confused")
        return Submitted("done", f"unknown command {work.command!r}")
