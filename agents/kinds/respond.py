"""Answer a person's reply in one of the bot's review threads, once, in that thread.

Started by a ``pull_request_review_comment`` reply from someone with write access, and polled
by every review run of the same bot (:mod:`agents.kinds.review`); each reply is keyed by its
comment id (:func:`agents.posting.keys.answer_key`), so it is answered once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from agents.kinds.kind import Ask, Kind
from agents.planning.discover import Discovery, SkippedItem
from agents.planning.sources import GatewayReplySource, repos_by_owner, role_identity
from agents.work import WorkWords

if TYPE_CHECKING:
    from agents.wiring import Runtime
    from agents.work import Task

NAME = "respond"


async def discover(runtime: Runtime, ask: Ask) -> Discovery:
    """The replies the kind's role has to answer in its bot's threads (polled by every review
    run, and the whole of a responder run, which a reply's webhook starts); none when no role
    of this kind is configured."""
    from agents.kinds.book import RoleBook

    found = Discovery(items=[], skipped=[])
    role = RoleBook(runtime.roles).role_for(NAME)
    if role is None:
        return found
    identity = role_identity(runtime, role)
    for owned in repos_by_owner(ask.repos).values():
        async with runtime.discovery(identity, owned) as (gateway, verified_login):
            one = await replies_in(
                runtime,
                GatewayReplySource(gateway, store=runtime.store),
                owned,
                verified_login,
                ask.targets,
            )
        found.replies += one.replies
        found.skipped += one.skipped
    found.reply_role = role
    return found


async def replies_in(
    runtime: Runtime,
    source: GatewayReplySource,
    owned: Sequence[str],
    verified_login: str | None,
    targets: list[tuple[str, int]] | None,
) -> Discovery:
    """One owner's replies to answer (and the PRs with none), read through ``source``."""
    from agents.planning.replies import discover_replies
    from agents.posting.keys import review_key_prefix

    def answered(key: str) -> bool:
        record = runtime.store.get_review_key(key)
        return record is not None and record.state == "posted"

    replies = await discover_replies(
        source,
        owned,
        bot_login=verified_login,
        answered=answered,
        targets=targets,
        reviewed=lambda repo, number: bool(
            runtime.store.posted_review_keys(review_key_prefix(repo, number))
        ),
        waits=source.waits,
        settled=source.settled,
    )
    asked = {(t.repo, t.number) for t in replies.items}
    skipped = [
        SkippedItem(repo, number, head, "nothing_to_answer")
        for repo, number, head in replies.looked_at
        if (repo, number) not in asked
    ]
    return Discovery(items=[], skipped=skipped, replies=replies.items)


def describe(task: Task) -> str:
    """The responder's task line: which reply, in which thread, and the two tools to use."""
    sha = f" at head {task.head_sha}" if task.head_sha else ""
    return (
        f"Answer reply {task.reply_to} in your review thread on pull request "
        f"{task.repo}#{task.number}{sha}: read the thread with get_thread, then post one answer "
        "with reply_in_thread."
    )


KIND = Kind(
    name=NAME,
    summary="Answer a maintainer's reply in one of the bot's review threads, once",
    on="pulls",
    answers=frozenset({"respond"}),
    discover=discover,
    task="respond",
    describe=describe,
    words=WorkWords(
        one="answer",
        many="answers",
        done="already answered",
        of="to",
        items="reply(ies) to answer",
    ),
)
