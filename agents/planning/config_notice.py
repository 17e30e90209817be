"""Telling a pull request, once, that its repository's ``.github/swarm.yaml`` is invalid.

An invalid file skips the whole repository until it is fixed; the run summary says so, and the
pull requests the swarm was asked to review get one comment naming each problem as
``file:line``. Once per (repository, content of the file, pull request): the store's claim
(:func:`agents.posting.once.write_once`, the review key's mechanism) stops a second run, a
concurrent one included, and a hidden marker stops a run whose store never heard of the first.
Only the bot's own marker counts, by its verified login: a PR author who pastes the marker into a
comment of their own cannot silence the notice. A fixed file (new content) is a new notice.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

from agents.github.errors import GitHubApiError, TokenRefused
from agents.planning.repo_config import CONFIG_PATH
from agents.posting.keys import find_own_comment, with_comment_marker
from agents.posting.once import Claim, Claims, Written, create_or_find, write_once
from agents.transport import GitHubUnreachable

log = logging.getLogger("swarm.config_notice")

# A run posts its notices within seconds; a claim this old belongs to a run that died.
CLAIM_STALE_AFTER = timedelta(minutes=10)


@dataclass(frozen=True)
class ConfigNotice:
    """An invalid file: its repository, content digest, problems, and the PRs to tell."""

    repo: str
    digest: str
    problems: tuple[str, ...]
    numbers: tuple[int, ...]


class IssueComments(Protocol):
    """The gateway's comment calls, made as the bot."""

    async def list_issue_comments(
        self, repo: str, number: int
    ) -> Sequence[Mapping[str, object]]: ...

    async def create_issue_comment(
        self, repo: str, number: int, body: str
    ) -> Mapping[str, object]: ...


def notice_key(repo: str, number: int, digest: str) -> str:
    return f"{repo}#{number}:config-error/{digest[:16]}"


def notice_body(problems: Sequence[str]) -> str:
    # The problems quote the file's keys; a fence keeps them from being read as markdown.
    listed = "\n".join(p.replace("~~~", "~ ~ ~") for p in problems)
    return (
        f"swarm did not review this pull request: `{CONFIG_PATH}` on the default branch is "
        "not valid, so the repository is skipped until it is fixed.\n\n"
        f"~~~text\n{listed}\n~~~\n\n"
        f"Check a fix with `swarm config check {CONFIG_PATH}`. "
        "This note is posted once per version of the file."
    )


def _stale(claim: Claim) -> bool:
    at = claim.at if claim.at.tzinfo else claim.at.replace(tzinfo=UTC)
    return datetime.now(UTC) - at > CLAIM_STALE_AFTER


async def post_notices(
    notice: ConfigNotice,
    gateway: IssueComments,
    claims: Claims,
    *,
    holder: str,
    bot_login: str,
) -> dict[int, Written]:
    """Comment on each of the notice's pull requests that has not had it yet, as ``bot_login``
    (verified by the caller: whose markers count depends on it)."""
    body = notice_body(notice.problems)
    done: dict[int, Written] = {}
    for number in notice.numbers:
        key = notice_key(notice.repo, number, notice.digest)
        try:
            done[number] = await _post_one(
                gateway, claims, key, notice.repo, number, body, holder, bot_login
            )
        except TokenRefused:
            raise  # our own identity: every PR would fail alike
        except (GitHubApiError, GitHubUnreachable) as exc:
            # One PR that refuses a comment (locked, gone) must not keep the others untold.
            log.warning("%s#%d: config notice not posted: %s", notice.repo, number, exc)
    return done


async def _post_one(
    gateway: IssueComments,
    claims: Claims,
    key: str,
    repo: str,
    number: int,
    body: str,
    holder: str,
    bot_login: str,
) -> Written:
    marked = with_comment_marker(body, key)

    async def find() -> Mapping[str, object] | None:
        return find_own_comment(await gateway.list_issue_comments(repo, number), key, bot_login)

    async def create() -> Mapping[str, object]:
        return await create_or_find(
            lambda: gateway.create_issue_comment(repo, number, marked), find, f"notice {key}"
        )

    return await write_once(
        claims, key, holder, find=find, create=create, alive=lambda c: not _stale(c)
    )
