"""Discovery as the flow runs it: the role's kind finds its items (:mod:`agents.kinds`), and
what the repository's configuration skipped or got wrong is told in the run's report.

Review roles get open pull requests needing their review (under each repository's
``.github/swarm.yaml``); a triage role gets open issues its bot has not commented on yet.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from agents.kinds.kind import Ask
from agents.kinds.review import read_plan as read_plan
from agents.planning.discover import Discovery

if TYPE_CHECKING:
    from agents.wiring import Runtime

log = logging.getLogger("flows.run.discovery")


# Skips the repository's .github/swarm.yaml decided: listed in the report with their reasons.
CONFIG_SKIPS = frozenset(
    {"role_disabled", "author_skipped", "label_skipped", "no_reviewable_files", "too_many_files"}
)


def config_skips(found: Discovery) -> list[str]:
    """``acme/widgets#3: reason: detail`` for each PR the repository's configuration skipped."""
    return [
        f"{s.repo}#{s.number}: {s.reason}" + (f": {s.detail}" if s.detail else "")
        for s in found.skipped
        if s.reason in CONFIG_SKIPS
    ]


# What a kind's discovery refused to start, and the report says so (a label by a reader).
REFUSALS = frozenset({"label_not_by_writer"})


def refusals(found: Discovery) -> list[str]:
    """``acme/widgets#6: reason: detail`` for each item whose start discovery refused."""
    from agents.redact import redact

    return [
        f"{s.repo}#{s.number}: {s.reason}" + (f": {redact(s.detail)}" if s.detail else "")
        for s in found.skipped
        if s.reason in REFUSALS
    ]


# Why discovery left an item alone when it has no detail of its own to say so.
_SKIP_WORDS = {
    "already_reviewed": "already done at this head",
    "pull_request_open": "a draft pull request is open for it already",
    "implemented_before": "the store says a draft pull request was opened for it before",
    "nothing_to_answer": "nothing to answer",
    "draft": "a draft",
    "fix_rounds_done": "its fix rounds are settled (marked ready, or what is open listed)",
    "marked_ready": "nothing blocking: marked ready for review, its starter asked to review",
}


def left_alone(found: Discovery) -> list[str]:
    """``acme/widgets#3@abc1234: already done at this head`` for each item discovery left alone
    that the report names nowhere else (not a configuration skip, a refusal, or unreadable):
    ``swarm runs RUN`` lists them, so a run with no worker still says why."""
    from agents.redact import redact

    told = CONFIG_SKIPS | REFUSALS | {"unreadable"}
    return [
        f"{s.where}"
        + (f"@{s.head_sha[:7]}" if s.head_sha and s.number else "")
        + ": "
        + redact(s.detail or _SKIP_WORDS.get(s.reason, s.reason))
        for s in found.skipped
        if s.reason not in told
    ]


def config_problems(found: Discovery) -> list[str]:
    """``acme/widgets: .github/swarm.yaml:4: ...`` for each problem of an invalid file."""
    from agents.redact import redact

    return [
        f"{repo}: {redact(problem)}"
        for repo, problems in found.config_errors.items()
        for problem in problems
    ]


async def discover(
    runtime: Runtime,
    repos: Sequence[str],
    role: str,
    summarizer_role: str | None,
    targets: list[tuple[str, int]] | None,
    rerun: str | None,
) -> Discovery:
    """What a run of ``role`` works on, found the way the role's kind finds it
    (:mod:`agents.kinds`); nothing for a kind only ever planned inside another's run."""
    from agents.kinds.book import RoleBook
    from agents.planning.sources import role_identity

    role_identity(runtime, role)  # an unknown role is a configuration error, said first
    kind = RoleBook(runtime.roles).kind_of(role)
    if kind is None or kind.discover is None:
        return Discovery(items=[], skipped=[])
    ask = Ask(repos, role, summarizer_role, targets, rerun)
    return await kind.discover(runtime, ask)
