"""Which replies in the bot's threads wait for an answer: the newest after the bot's last word,
by a person with write access, in a thread the bot's verified login started with a finding."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from agents.planning.replies import discover_replies
from agents.posting.findings import Finding
from agents.posting.keys import answer_key
from agents.posting.render import inline_comment

pytestmark = pytest.mark.anyio

BOT = "swarm-reviewer[bot]"
REPO, PR, HEAD = "acme/widgets", 1, "f" * 40
FINDING = Finding(path="a.py", line=3, severity="minor", category="style", message="Rename it.")


def comment(cid: int, login: str, body: str = "x", reply_to: int | None = None) -> dict[str, Any]:
    kind = "Bot" if login.endswith("[bot]") else "User"
    found: dict[str, Any] = {
        "id": cid,
        "user": {"login": login, "type": kind},
        "body": body,
        "created_at": f"2026-01-01T00:00:{cid:02d}Z",
    }
    if reply_to is not None:
        found["in_reply_to_id"] = reply_to
    return found


ROOT = comment(1, BOT, str(inline_comment(FINDING, "line", HEAD)["body"]))


class Source:
    def __init__(self, comments: list[dict[str, Any]], permissions: dict[str, str]) -> None:
        self.comments, self.permissions = comments, permissions
        self.asked: list[str] = []

    async def open_pull_heads(self, repo: str) -> list[tuple[int, str]]:
        return [(PR, HEAD)]

    async def review_comments(
        self, repo: str, numbers: Sequence[int]
    ) -> dict[int, list[dict[str, Any]]]:
        return {n: self.comments for n in numbers}

    async def permission(self, repo: str, login: str) -> str:
        self.asked.append(login)
        return self.permissions.get(login, "none")


async def waiting(comments: list[dict[str, Any]], answered: frozenset[str] = frozenset()) -> Any:
    source = Source(comments, {"octo-maintainer": "admin", "bob-dev": "read"})
    return await discover_replies(
        source, [REPO], bot_login=BOT, answered=lambda key: key in answered
    )


async def test_a_maintainers_reply_in_a_finding_thread_is_to_answer() -> None:
    found = await waiting([ROOT, comment(2, "octo-maintainer", "Why?", reply_to=1)])
    [task] = found.items
    assert (task.kind, task.repo, task.number, task.head_sha, task.reply_to) == (
        "respond",
        REPO,
        PR,
        HEAD,
        2,
    )


async def test_readers_bots_and_answered_replies_get_nothing() -> None:
    reader = await waiting([ROOT, comment(2, "bob-dev", "Approve it?", reply_to=1)])
    assert reader.items == [] and reader.ignored == [("bob-dev", "read access, not write")]
    bot = await waiting([ROOT, comment(2, "dependabot[bot]", "bump", reply_to=1)])
    assert bot.items == [] and bot.ignored == [("dependabot[bot]", "a bot")]
    done = frozenset({answer_key(REPO, PR, 2)})
    assert (await waiting([ROOT, comment(2, "octo-maintainer", reply_to=1)], done)).items == []


async def test_a_later_reply_without_write_access_does_not_hide_a_maintainers_question() -> None:
    # Issue 37, class 7: only the newest reply was looked at, so the PR author's "thanks"
    # after the maintainer's question left the question unanswered.
    found = await waiting(
        [
            ROOT,
            comment(2, "octo-maintainer", "Is this safe?", reply_to=1),
            comment(3, "bob-dev", "thanks", reply_to=1),
        ]
    )
    assert [t.reply_to for t in found.items] == [2]
    assert found.ignored == [("bob-dev", "read access, not write")]


async def test_every_writer_reply_after_the_bots_last_word_waits() -> None:
    two = [
        ROOT,
        comment(2, "octo-maintainer", "Why?", reply_to=1),
        comment(3, "octo-maintainer", "And the other file?", reply_to=1),
    ]
    assert [t.reply_to for t in (await waiting(two)).items] == [2, 3]


async def test_only_comments_after_the_bots_last_word_wait() -> None:
    answered = [
        ROOT,
        comment(2, "octo-maintainer", "Why?", reply_to=1),
        comment(3, BOT, "Because.", reply_to=1),
    ]
    assert (await waiting(answered)).items == []
    again = [*answered, comment(4, "octo-maintainer", "And now?", reply_to=1)]
    assert [t.reply_to for t in (await waiting(again)).items] == [4]


async def test_a_thread_the_bot_did_not_start_with_a_finding_is_not_its_to_answer() -> None:
    forged = comment(1, "octo-contributor", str(ROOT["body"]))  # the marker, pasted by a person
    plain = comment(1, BOT, "A comment without a finding marker.")
    for root in (forged, plain):
        found = await waiting([root, comment(2, "octo-maintainer", reply_to=1)])
        assert found.items == []


async def test_a_pr_the_bot_never_reviewed_is_not_read_for_replies() -> None:
    source = Source([ROOT, comment(2, "octo-maintainer", "Why?", reply_to=1)], {})
    read: list[int] = []
    original = source.review_comments

    async def counted(repo: str, numbers: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
        read.extend(numbers)
        return await original(repo, numbers)

    source.review_comments = counted  # type: ignore[method-assign]
    found = await discover_replies(
        source, [REPO], bot_login=BOT, answered=lambda key: False, reviewed=lambda r, n: False
    )
    assert (found.items, read) == ([], [])
    assert found.looked_at == [(REPO, PR, HEAD)]


def _review(login: str, second: int) -> dict[str, Any]:
    kind = "Bot" if login.endswith("[bot]") else "User"
    return {
        "user": {"login": login, "type": kind},
        "submitted_at": f"2026-01-01T00:00:{second:02d}Z",
    }


def test_a_pr_whose_reviews_show_no_reply_after_the_bots_review_holds_none_to_read() -> None:
    from agents.planning.replies import newest_reply

    before = [_review("octo-maintainer", 1), _review(BOT, 5)]
    assert newest_reply(before, BOT, None) == (False, "2026-01-01T00:00:01Z#1")
    assert newest_reply([_review(BOT, 5), _review("other-bot[bot]", 9)], BOT, None)[0] is True


def test_a_reply_after_the_bots_review_is_read_until_it_was_read_with_nothing_left() -> None:
    from agents.planning.replies import newest_reply

    replied = [_review(BOT, 5), _review("octo-maintainer", 7)]
    assert newest_reply(replied, BOT, None) == (True, "2026-01-01T00:00:07Z#1")
    assert newest_reply(replied, BOT, "2026-01-01T00:00:07Z#1")[0] is False
    again = [*replied, _review(BOT, 8), _review("octo-maintainer", 9)]
    assert newest_reply(again, BOT, "2026-01-01T00:00:07Z#1") == (True, "2026-01-01T00:00:09Z#2")
    # A mark kept before marks held a count: a later reply is still read, nothing else.
    assert newest_reply(again, BOT, "2026-01-01T00:00:07Z")[0] is True
    assert newest_reply(replied, BOT, "2026-01-01T00:00:07Z")[0] is False


def test_a_reply_in_the_same_second_as_the_bots_review_or_the_last_reply_read_is_read() -> None:
    from agents.planning.replies import newest_reply

    # GitHub's times are whole seconds: the same time does not say which came first.
    same_second = [_review(BOT, 5), _review("octo-maintainer", 5)]
    assert newest_reply(same_second, BOT, None) == (True, "2026-01-01T00:00:05Z#1")
    read = newest_reply(same_second, BOT, None)[1]
    assert newest_reply(same_second, BOT, read)[0] is False
    # A second reply within the second of the one read: the time alone did not move.
    another = [*same_second, _review("octo-maintainer", 5)]
    assert newest_reply(another, BOT, read) == (True, "2026-01-01T00:00:05Z#2")


def test_reviews_the_listing_could_not_hold_or_a_bot_review_github_lacks_are_read() -> None:
    from agents.planning.replies import newest_reply

    assert newest_reply(None, BOT, "2026-01-01T00:00:07Z")[0] is True
    assert newest_reply([_review("octo-maintainer", 3)], BOT, None)[0] is True
