"""Triage a new issue: a comment and labels, once per issue, as the role's bot.

Started by an ``issues`` event (opened) and by a scheduled run, which finds the open issues its
bot has not commented on yet (:func:`agents.planning.triage.discover_triage`); the bot's own
comment is what keys it for exactly-once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.kinds.kind import Ask, Kind
from agents.planning.discover import Discovery
from agents.planning.sources import GatewayIssueSource, repos_by_owner, role_identity
from agents.work import WorkWords

if TYPE_CHECKING:
    from agents.wiring import Runtime
    from agents.work import Task


async def discover(runtime: Runtime, ask: Ask) -> Discovery:
    """The open issues ``ask.role``'s bot has yet to triage, read owner by owner as that bot
    with a token that may read issues and nothing more."""
    from agents.dispatch.dispatcher import TRIAGE_DISCOVERY_PERMISSIONS
    from agents.planning.triage import discover_triage

    identity = role_identity(runtime, ask.role)
    found = Discovery(items=[], skipped=[])
    for owned in repos_by_owner(ask.repos).values():
        async with runtime.discovery(identity, owned, TRIAGE_DISCOVERY_PERMISSIONS) as (
            gateway,
            verified_login,
        ):
            part = await discover_triage(
                GatewayIssueSource(gateway), owned, bot_login=verified_login, targets=ask.targets
            )
        found.items += part.items
        found.skipped += part.skipped
    return found


def describe(task: Task) -> str:
    """The triager's task line."""
    target = f"{task.repo}#{task.number}"
    return f"Triage issue {target}: add fitting labels and post one helpful comment."


KIND = Kind(
    name="triage",
    summary="Triage a new issue with one comment and labels",
    on="issues",
    answers=frozenset({"triage"}),
    discover=discover,
    task="triage_issue",
    describe=describe,
    words=WorkWords(
        one="triage",
        many="triages",
        done="already triaged",
        items="issue(s) to triage",
    ),
)
