"""Reading what people said about the bot's review comments, and turning it into proposals.

Polled at the start of each run of a repository (``learn_from_repo``), or fed one webhook
comment at a time (``learn_from_comments``, for the events path). Trust follows authorship:
only replies, reactions and thread resolutions by people whose collaborator permission on the
repository is write or above count; bots (our own included) and everyone else, the PR's author
without write access too (GitHub lets an author resolve threads), are ignored, whatever they did.
What counts is stored by :mod:`agents.memory.feedback` as a proposed, quoted learning.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agents.memory.feedback import (
    WRITE_PERMISSIONS,
    Feedback,
    Signal,
    Via,
    classify_reaction,
    classify_reply,
    propose,
)
from agents.memory.ports import MemoryBackend
from agents.posting.render import finding_message

if TYPE_CHECKING:
    from agents.github.endpoints import GitHubEndpoints

log = logging.getLogger("agents.memory.learning")
# Resolved threads are read per pull request (one GraphQL query each): the newest this many
# pull requests with the bot's comments, so a long-lived repository costs a bounded poll.
THREAD_PULLS = 20


@dataclass
class LearningReport:
    proposed: list[int] = field(default_factory=list)
    accepted: list[int] = field(default_factory=list)
    ignored: list[tuple[str, str]] = field(default_factory=list)  # (login, why)


def _field(obj: Mapping[str, object], key: str) -> Mapping[str, object]:
    """``obj[key]`` when it is an object (a user, a connection), else an empty one."""
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


def _int(value: object) -> int:
    """An id as GitHub sends it: a number (or its digits)."""
    if isinstance(value, (int, float, str)):
        return int(value)
    raise TypeError(f"an id is a number, not {type(value).__name__}")


def _login(obj: Mapping[str, object]) -> tuple[str, bool]:
    user = _field(obj, "user")
    login = str(user.get("login") or "")
    return login, user.get("type") == "Bot" or login.endswith("[bot]")


def pull_number(comment: Mapping[str, object]) -> int:
    """The number of the pull request a review comment is on (0: its answer does not say)."""
    url = str(comment.get("pull_request_url") or "")
    tail = url.rstrip("/").rsplit("/", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def commented_code(diff_hunk: str) -> str:
    """The line a review comment is on: the last line of its diff hunk, without the marker."""
    lines = [line for line in diff_hunk.splitlines() if not line.startswith("@@")]
    return lines[-1][1:].strip() if lines else ""


class _Learner:
    def __init__(
        self,
        gateway: GitHubEndpoints,
        store: MemoryBackend,
        repo: str,
        bot_logins: Collection[str],
        auto_accept: bool,
    ) -> None:
        self.gateway, self.store, self.repo = gateway, store, repo
        self.bots = set(bot_logins)
        self.auto_accept = auto_accept
        self.permissions: dict[str, str] = {}
        self.report = LearningReport()

    async def may_teach(self, login: str, is_bot: bool) -> str | None:
        """The person's permission when it is write or above; None (and why) otherwise."""
        if is_bot or not login or login in self.bots:
            self.report.ignored.append((login, "a bot"))
            return None
        if login not in self.permissions:
            self.permissions[login] = await self.gateway.collaborator_permission(self.repo, login)
        permission = self.permissions[login]
        if permission not in WRITE_PERMISSIONS:
            self.report.ignored.append((login, f"{permission} access, not write"))
            return None
        return permission

    def keep(
        self,
        bot_comment: Mapping[str, object],
        by: str,
        permission: str,
        signal: Signal,
        said: str,
        reply_url: str | None,
        key: str,
        via: Via = "reply",
    ) -> None:
        line = bot_comment.get("line")
        item = Feedback(
            repo=self.repo,
            pr_number=pull_number(bot_comment),
            comment_id=_int(bot_comment["id"]),
            comment_url=str(bot_comment.get("html_url") or bot_comment.get("url") or ""),
            path=str(bot_comment.get("path") or ""),
            line=line if isinstance(line, int) else None,
            code=commented_code(str(bot_comment.get("diff_hunk") or "")),
            finding=finding_message(str(bot_comment.get("body") or "")),
            by=by,
            permission=permission,
            signal=signal,
            said=said,
            reply_url=reply_url,
            key=key,
            via=via,
        )
        row, new = propose(self.store, item, auto_accept=self.auto_accept)
        if new:
            (self.report.accepted if row.state == "active" else self.report.proposed).append(row.id)

    async def replies(
        self, comments: Iterable[Mapping[str, object]], bot: Mapping[int, Mapping[str, object]]
    ) -> None:
        for reply in comments:
            reply_to = reply.get("in_reply_to_id") or 0
            parent = bot.get(reply_to) if isinstance(reply_to, int) else None
            if parent is None:
                continue
            login, is_bot = _login(reply)
            permission = await self.may_teach(login, is_bot)
            signal = classify_reply(str(reply.get("body") or ""))
            if permission is None or signal is None:
                continue
            url = str(reply.get("html_url") or reply.get("url") or "")
            key = f"{self.repo}:reply:{reply['id']}"
            self.keep(parent, login, permission, signal, str(reply.get("body")), url, key)

    async def reactions(self, bot: Mapping[int, Mapping[str, object]]) -> None:
        for comment in bot.values():
            summary = comment.get("reactions")
            if isinstance(summary, Mapping) and not summary.get("-1"):
                continue  # GitHub counts reactions on the comment: nothing to fetch
            for reaction in await self.gateway.list_review_comment_reactions(
                self.repo, _int(comment["id"])
            ):
                signal = classify_reaction(str(reaction.get("content")))
                if signal is None:
                    continue
                login, is_bot = _login(reaction)
                permission = await self.may_teach(login, is_bot)
                if permission is not None:
                    key = f"{self.repo}:reaction:{reaction['id']}"
                    self.keep(comment, login, permission, signal, ":-1:", None, key, "reaction")

    async def resolutions(self, bot: Mapping[int, Mapping[str, object]]) -> None:
        """Each resolved thread that starts with one of ``bot``'s comments: an acknowledgement
        by whoever resolved it, when they have write access."""
        latest: dict[int, int] = {}
        for comment_id, comment in bot.items():
            number = pull_number(comment)
            if number:
                latest[number] = max(latest.get(number, 0), comment_id)
        newest = sorted(latest, key=lambda n: latest[n], reverse=True)[:THREAD_PULLS]
        for number in newest:
            for thread in await self.gateway.list_review_threads(self.repo, number):
                nodes = _field(thread, "comments").get("nodes") or [{}]
                first = (
                    nodes[0] if isinstance(nodes, list) and isinstance(nodes[0], Mapping) else {}
                )
                parent = bot.get(_int(first.get("databaseId") or 0))
                resolver = _field(thread, "resolvedBy")
                if thread.get("isResolved") and parent is not None:
                    login = str(resolver.get("login") or "")
                    # `resolvedBy` is typed User: an App's bot that resolved the thread reads as
                    # a User named by its slug, without REST's "[bot]", so a person whose login
                    # is that slug cannot be told from it here and teaches nothing this way.
                    is_bot = f"{login}[bot]" in self.bots
                    await self.acknowledged(parent, login, is_bot, str(thread.get("id")))

    async def acknowledged(
        self, parent: Mapping[str, object], login: str, is_bot: bool, thread_id: str
    ) -> None:
        """``login`` resolved the thread ``thread_id`` that ``parent`` (the bot's) starts."""
        permission = await self.may_teach(login, is_bot)
        if permission is not None:
            key = f"{self.repo}:resolved:{thread_id}:{login}"
            self.keep(parent, login, permission, "acknowledgement", "", None, key, "resolution")


def _bot_comments(
    learner: _Learner, listed: Iterable[Mapping[str, object]]
) -> dict[int, Mapping[str, object]]:
    """The bot's own comments that start a thread, by id."""
    return {
        _int(c["id"]): c
        for c in listed
        if _login(c)[0] in learner.bots and not c.get("in_reply_to_id")
    }


async def learn_from_comments(
    gateway: GitHubEndpoints,
    store: MemoryBackend,
    repo: str,
    comments: Iterable[Mapping[str, object]],
    *,
    bot_logins: Collection[str],
    auto_accept: bool = False,
    read_reactions: bool = True,
    read_threads: bool = False,
) -> LearningReport:
    """Learn from ``comments`` (review comments of ``repo`` as GitHub renders them: a page of
    the repository listing, or one webhook ``comment`` with its parent fetched by the caller);
    ``read_threads`` also reads whether the threads of the bot's comments were resolved."""
    learner = _Learner(gateway, store, repo, bot_logins, auto_accept)
    listed = list(comments)
    bot = _bot_comments(learner, listed)
    await learner.replies(listed, bot)
    if read_reactions:
        await learner.reactions(bot)
    if read_threads:
        await learner.resolutions(bot)
    return learner.report


async def learn_from_repo(
    gateway: GitHubEndpoints,
    store: MemoryBackend,
    repo: str,
    *,
    bot_logins: Collection[str],
    auto_accept: bool = False,
    comments: Iterable[Mapping[str, object]] | None = None,
) -> LearningReport:
    """Poll ``repo``'s review comments and their threads once (at the start of a run) and
    learn from replies, reactions and resolved threads. ``comments``: the repository's review
    comments when the caller has just read them (None: read here)."""
    if comments is None:
        comments = await gateway.list_repo_review_comments(repo)
    report = await learn_from_comments(
        gateway,
        store,
        repo,
        comments,
        bot_logins=bot_logins,
        auto_accept=auto_accept,
        read_threads=True,
    )
    if report.proposed or report.accepted:
        log.info(
            "%s: %d learning(s) proposed, %d accepted from review feedback",
            repo,
            len(report.proposed),
            len(report.accepted),
        )
    return report
