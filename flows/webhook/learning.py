"""Feedback from webhooks: a reply to the bot's review comment, a thread of it resolved (or a
new comment on a PR it reviewed) is learned from within seconds instead of at the next run's
poll.

The receiver only queues the work (:class:`flows.webhook.enqueue.InProcessEnqueuer`, a few at a
time):
learning asks GitHub for the PR's review comments, each teacher's permission and the reactions,
and GitHub gives a receiver 10 s. The learner reads as the reviewer role's bot with a read-only
token for the one repository, confirms the token's login with GitHub before trusting whose
comments are the bot's, and hands the comments to
:func:`agents.memory.learning.learn_from_comments`:
the same trust rules as the poll (write access or above teaches; bots and everyone else do not),
the same proposals, deduplicated by reply and reaction, so the poll and the webhook never
propose one thing twice.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from agents.kinds.book import RoleBook
from agents.redact import redact
from agents.store.records import DeliveryEnd
from flows.run.bot import bot_gateway

if TYPE_CHECKING:
    from agents.memory.learning import LearningReport
    from agents.memory.ports import MemoryBackend
    from agents.roles import Role
    from agents.settings.model import Settings
    from flows.run.bot import BotCommands
    from flows.webhook.app import DeliveryLog

log = logging.getLogger("flows.events")

LEARN_PERMISSIONS = {"metadata": "read", "pull_requests": "read"}


class FeedbackLearner:
    """The learning runner the receiver's learning queue calls, one PR at a time; what it
    learned (or why not) becomes the delivery's outcome in ``deliveries``."""

    def __init__(
        self,
        settings: Settings,
        roles: dict[str, Role],
        bot: BotCommands,
        store: MemoryBackend,
        deliveries: DeliveryLog | None = None,
    ) -> None:
        self.settings, self.roles, self.bot, self.store = settings, roles, bot, store
        self.deliveries = deliveries

    async def __call__(self, parameters: dict[str, Any]) -> LearningReport | None:
        repo, number = str(parameters["repo"]), int(parameters["number"])
        delivery = parameters.get("delivery")
        name = str(parameters.get("role") or RoleBook(self.roles).answering("learn"))
        role = self.roles.get(name)
        if role is None or not role.feedback_signals:
            await self._finish(delivery, "ignored", f"role {name!r} learns from no feedback")
            return None
        try:
            report = await self._learn(role, repo, number)
        except Exception as exc:
            # Nothing is lost: the next run's poll reads the same feedback.
            detail = f"{type(exc).__name__}: {redact(str(exc))}"
            log.warning("feedback on %s#%d not read: %s", repo, number, detail)
            await self._finish(delivery, "failed", detail)
            return None
        if report is None:
            await self._finish(delivery, "refused", "the token's login is not the bot's")
            return None
        detail = (
            f"{len(report.proposed)} learning(s) proposed, {len(report.accepted)} accepted, "
            f"{len(report.ignored)} ignored"
        )
        await self._finish(delivery, "done", detail)
        return report

    async def _finish(self, delivery: object, outcome: str, detail: str) -> None:
        deliveries = self.deliveries
        if delivery is None or deliveries is None:
            return
        await anyio.to_thread.run_sync(
            lambda: deliveries.finish_delivery(
                str(delivery), DeliveryEnd(outcome, detail), only_from=("received", "enqueued")
            )
        )

    async def _learn(self, role: Role, repo: str, number: int) -> LearningReport | None:
        from agents.memory.learning import learn_from_comments

        identity = role.identity or "default"
        async with bot_gateway(
            self.bot.dispatcher, self.bot.gateway, identity, repo, LEARN_PERMISSIONS
        ) as gateway:
            login = await gateway.viewer_login()
            if login.casefold() != gateway.identity.casefold():
                # Whose comments are the bot's rests on this login: an unproven one counts none.
                log.warning("feedback on %s#%d not read: token is %s", repo, number, login)
                return None
            comments = await gateway.list_pull_review_comments(repo, number)
            report = await learn_from_comments(
                gateway,
                self.store,
                repo,
                comments,
                bot_logins={login},
                auto_accept=self.settings.memory_auto_accept,
                read_threads=True,
            )
        log.info(
            "%s#%d: %d learning(s) proposed, %d accepted from feedback (webhook)",
            repo,
            number,
            len(report.proposed),
            len(report.accepted),
        )
        return report
