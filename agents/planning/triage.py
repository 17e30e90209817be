"""Which open issues the triager still has to triage: plain Python, no Prefect.

An issue counts as triaged once the triager's own bot has commented on it (the triager posts
exactly one comment per issue). Whose comment counts is decided by login: the bot discovery
reads as, never a comment anyone else could write. Pull requests are issues on GitHub's list
endpoint and are left out here.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from agents.planning.discover import Discovery, SkippedItem
from agents.work import Task


@dataclass(frozen=True)
class OpenIssue:
    repo: str
    number: int
    is_pull: bool = False


class IssueSource(Protocol):
    async def open_issues(self, repo: str) -> list[OpenIssue]: ...

    async def comment_authors(self, repo: str, number: int) -> list[str]: ...


async def discover_triage(
    source: IssueSource,
    repos: Sequence[str],
    *,
    bot_login: str | None,
    targets: Collection[tuple[str, int]] | None = None,
) -> Discovery:
    """Open issues of ``repos`` (or only ``targets``) the bot has not commented on yet."""
    wanted = {(r.lower(), n) for r, n in targets} if targets is not None else None
    found = Discovery(items=[], skipped=[])
    for repo in repos:
        for issue in await source.open_issues(repo):
            if issue.is_pull or (wanted is not None and (repo.lower(), issue.number) not in wanted):
                continue
            try:
                authors = await source.comment_authors(repo, issue.number)
            except Exception as exc:
                found.skipped.append(SkippedItem(repo, issue.number, "", "unreadable", str(exc)))
                continue
            if bot_login is not None and bot_login in authors:
                found.skipped.append(SkippedItem(repo, issue.number, "", "already_reviewed"))
                continue
            found.items.append(Task(kind="triage_issue", repo=repo, number=issue.number))
    return found
