"""Which replies in the bot's own review threads the responder still has to answer: plain Python.

A thread counts when its first comment is one of the bot's findings (its marker, written by the
verified login: a thread anyone else starts is not the bot's to answer in). In it, every
comment after the bot's last word is one to answer, when a person wrote it (never a bot, our
own included) who has write access or above to the repository (asked of GitHub as the bot, like
every such decision: a PR author without write access gets no answer, whatever they wrote), and
the store has not recorded an answer to it. Everything a person wrote stays data: only ids leave
this module.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from agents.github.errors import IdentityPaused, TokenRefused
from agents.json_value import as_object, int_or_zero
from agents.memory.feedback import WRITE_PERMISSIONS
from agents.posting.keys import answer_key, parse_finding_mark
from agents.work import Task

log = logging.getLogger("swarm.planning")


class ReplySource(Protocol):
    """The GitHub reads finding replies needs, as the bot."""

    async def open_pull_heads(self, repo: str) -> list[tuple[int, str]]:
        """(number, head SHA) of each open pull request."""
        ...

    async def review_comments(
        self, repo: str, numbers: Sequence[int]
    ) -> Mapping[int, Sequence[Mapping[str, object]]]:
        """Each of ``numbers``' review comments, replies included (``in_reply_to_id``), read
        for the repository at once where GitHub allows it."""
        ...

    async def permission(self, repo: str, login: str) -> str: ...


@dataclass
class Replies:
    """The replies to answer, one task each, and who was left unanswered and why."""

    items: list[Task] = field(default_factory=list)
    ignored: list[tuple[str, str]] = field(default_factory=list)  # (login, why)
    # (repo, number, head SHA) of every open pull request looked at.
    looked_at: list[tuple[str, int, str]] = field(default_factory=list)
    # (repo, number) of every pull request whose review comments were read.
    read: list[tuple[str, int]] = field(default_factory=list)


def _author(comment: Mapping[str, object]) -> tuple[str, bool]:
    user = as_object(comment.get("user"))
    login = str(user.get("login") or "")
    return login, user.get("type") == "Bot" or login.endswith("[bot]")


def waiting_replies(
    comments: Sequence[Mapping[str, object]], root: Mapping[str, object], bot_login: str
) -> list[Mapping[str, object]]:
    """The comments of ``root``'s thread after the bot's last word, oldest first. Every one is
    looked at, not only the newest: a later reply by someone without write access (the PR's
    author) must not hide a maintainer's question before it."""
    thread = sorted(
        (c for c in comments if c.get("in_reply_to_id") == root.get("id")),
        key=lambda c: (str(c.get("created_at") or ""), int_or_zero(c.get("id"))),
    )
    since = 0
    for index, comment in enumerate(thread):
        if _author(comment)[0].casefold() == bot_login.casefold():
            since = index + 1
    return thread[since:]


def newest_reply(
    reviews: Sequence[Mapping[str, object]] | None, bot_login: str, read_up_to: str | None
) -> tuple[bool, str | None]:
    """(a reply may wait on the PR, the mark to keep once it is read with nothing to answer).

    GitHub files each reply in a review thread under a review of its own, a bodyless
    ``COMMENTED`` one by the replier, so a PR's reviews show every reply. None waits when nobody
    but the bot submitted a review after the bot's first one, or nothing changed since
    ``read_up_to`` (the mark of the PR's reviews when its comments were last read with nothing
    left to answer): GitHub's own timestamps on both sides, so no clock of ours is compared with
    GitHub's. ``reviews`` None (more than the listing holds): one may wait.

    GitHub's timestamps are whole seconds, so a reply submitted in the same second as the bot's
    review, or as the newest reply already read, carries the same time: the first was taken as
    older than the review and never answered (seen once replies came fast, issue 33). So only a
    strictly older review is known to precede the bot's, and the mark is the newest time with the
    number of others' reviews: a submitted review cannot be deleted, so any new reply changes it.
    """
    if reviews is None:
        return True, None
    bot = bot_login.casefold()
    mine = [
        str(r.get("submitted_at") or "")
        for r in reviews
        if _author(r)[0].casefold() == bot and r.get("submitted_at")
    ]
    others = [
        str(r.get("submitted_at") or "")
        for r in reviews
        if _author(r)[0].casefold() != bot and r.get("submitted_at")
    ]
    newest = max(others, default=None)
    mark = None if newest is None else f"{newest}{MARK_SEPARATOR}{len(others)}"
    if not mine:
        return True, mark  # the store says it reviewed, GitHub shows none of it: read
    if newest is None or newest < min(mine):
        return False, mark
    return read_up_to is None or _changed_since(read_up_to, newest, mark), mark


# Between the newest review's time and the count of others' reviews in a mark.
MARK_SEPARATOR = "#"


def _changed_since(read_up_to: str, newest: str, mark: str | None) -> bool:
    """Whether the PR's reviews changed since the mark ``read_up_to``. A mark kept before marks
    held a count is a time alone: then only a later time tells."""
    if MARK_SEPARATOR not in read_up_to:
        return newest > read_up_to
    return mark != read_up_to


async def discover_replies(
    source: ReplySource,
    repos: Sequence[str],
    *,
    bot_login: str | None,
    answered: Callable[[str], bool],
    targets: Collection[tuple[str, int]] | None = None,
    reviewed: Callable[[str, int], bool] | None = None,
    waits: Callable[[str, int], bool] | None = None,
    settled: Callable[[str, int], None] | None = None,
) -> Replies:
    """Replies waiting for the bot's answer in its finding threads on open PRs of ``repos``.

    ``reviewed`` (the store: has the bot posted a review on that PR?) leaves out the PRs the bot
    never reviewed, which hold no thread of its findings (None: every open PR is read). ``waits``
    leaves out the PRs whose listing shows no reply since they were last read
    (:func:`newest_reply`), and ``settled`` is told of each PR read with no reply left to
    answer, so the next run need not read it again until someone replies. The review comments
    of a repository's PRs are asked for in one call, which the source answers with one read of
    the repository's where it can (issue 23: not one read per PR a run).
    """
    found = Replies()
    if bot_login is None:
        return found  # whose threads are the bot's rests on its verified login
    wanted = {(r.lower(), n) for r, n in targets} if targets is not None else None
    permissions: dict[tuple[str, str], str] = {}

    def worth_reading(repo: str, number: int) -> bool:
        return (reviewed is None or reviewed(repo, number)) and (
            waits is None or waits(repo, number)
        )

    for repo in repos:
        try:
            await _repo_replies(
                source, repo, bot_login, answered, wanted, permissions, found, worth_reading
            )
        except (TokenRefused, IdentityPaused):
            raise  # our own identity's failure or pause: every repository would fail alike
        except Exception as exc:
            # One repository that cannot be read must not hide the others' replies; discovery
            # of the reviews reports the repository to the person, this only logs it.
            log.warning("%s: cannot read its review threads: %s", repo, exc)
    if found.ignored:
        log.info("replies not answered: %s", ", ".join(f"{w} ({why})" for w, why in found.ignored))
    if settled is not None:
        asked = {(t.repo, t.number) for t in found.items}
        for repo, number in found.read:
            if (repo, number) not in asked:
                settled(repo, number)
    return found


async def _repo_replies(
    source: ReplySource,
    repo: str,
    bot_login: str,
    answered: Callable[[str], bool],
    wanted: set[tuple[str, int]] | None,
    permissions: dict[tuple[str, str], str],
    found: Replies,
    worth_reading: Callable[[str, int], bool],
) -> None:
    """Add ``repo``'s waiting replies (and who was left unanswered) to ``found``; of the PRs
    ``wanted``, only those ``worth_reading`` (reviewed by the bot, a reply since) are read."""
    heads: dict[int, str] = {}
    for number, head in await source.open_pull_heads(repo):
        if wanted is not None and (repo.lower(), number) not in wanted:
            continue
        found.looked_at.append((repo, number, head))
        if worth_reading(repo, number):
            heads[number] = head
    if not heads:
        return
    by_pull = await source.review_comments(repo, list(heads))
    found.read += [(repo, number) for number in heads]
    for number, head in heads.items():
        comments = by_pull.get(number, ())
        for root in comments:
            if root.get("in_reply_to_id"):
                continue
            login, _ = _author(root)
            if parse_finding_mark(login, str(root.get("body") or ""), bot_login) is None:
                continue
            for reply in waiting_replies(comments, root, bot_login):
                await _consider(source, (repo, number, head), reply, answered, permissions, found)


async def _consider(
    source: ReplySource,
    pull: tuple[str, int, str],
    reply: Mapping[str, object],
    answered: Callable[[str], bool],
    permissions: dict[tuple[str, str], str],
    found: Replies,
) -> None:
    """Add ``reply`` to ``found`` as a task when a person with write access wrote it and the
    store has no answer to it, else note who was left unanswered."""
    repo, number, head = pull
    who, is_bot = _author(reply)
    reply_id = int_or_zero(reply.get("id"))
    if is_bot or not who:
        found.ignored.append((who, "a bot"))
        return
    if answered(answer_key(repo, number, reply_id)):
        return
    if (repo, who) not in permissions:
        permissions[repo, who] = await source.permission(repo, who)
    permission = permissions[repo, who]
    if permission not in WRITE_PERMISSIONS:
        found.ignored.append((who, f"{permission} access, not write"))
        return
    found.items.append(
        Task(kind="respond", repo=repo, number=number, head_sha=head, reply_to=reply_id)
    )
