"""What a review posts, through the real worker (sandbox GitHub over HTTP, githubkit, the
anthropic SDK against the scripted model): severity-tagged inline findings with a committable
suggestion, the repository's threshold, one summary comment kept up to date, and the threads
of fixed findings resolved after a push. Also under lost answers and two workers at once."""

from __future__ import annotations

import asyncio
import hashlib
import re

import pytest

from agents.posting.keys import summary_key
from agents.posting.render import posted_finding
from sandbox.github.model import IssueComment, ReviewComment
from sandbox.github.seed import REVIEWER_BOT, WIDGETS, WIDGETS_PR_DEBUG_PRINT
from tests.security.conftest import bot_reviews
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio

PR = WIDGETS_PR_DEBUG_PRINT
CORE = "src/widgets/core.py"
COMMENTS = "/repos/{owner}/{repo}/issues/{issue_number}/comments"
REPLIES = "/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies"


def summaries(swarm: Swarm) -> list[IssueComment]:
    issue = swarm.sandbox.state.pull(WIDGETS, PR)
    return [c for c in issue.comments if c.user_login == REVIEWER_BOT]


def bot_threads(swarm: Swarm) -> list[ReviewComment]:
    pull = swarm.sandbox.state.pull(WIDGETS, PR).pull
    assert pull is not None
    return [
        c for c in pull.review_comments if c.user_login == REVIEWER_BOT and not c.in_reply_to_id
    ]


def replies(swarm: Swarm, root: ReviewComment) -> list[ReviewComment]:
    pull = swarm.sandbox.state.pull(WIDGETS, PR).pull
    assert pull is not None
    return [c for c in pull.review_comments if c.in_reply_to_id == root.id]


def head(swarm: Swarm) -> str:
    pull = swarm.sandbox.state.pull(WIDGETS, PR).pull
    assert pull is not None
    return pull.head_sha


def push_without_the_print(swarm: Swarm) -> str:
    tree = swarm.sandbox.state.repo(WIDGETS).commits[head(swarm)].tree
    core = tree[CORE]
    assert isinstance(core, str)
    fixed = "\n".join(line for line in core.splitlines() if "print(" not in line) + "\n"
    return swarm.sandbox.state.push_commit(WIDGETS, PR, {CORE: fixed}, "Drop the debug print")


async def test_findings_are_inline_with_severity_a_suggestion_and_one_linked_summary(
    swarm: Swarm,
) -> None:
    outcome = await swarm.review(WIDGETS, PR)

    assert outcome.status == "succeeded" and outcome.posted, outcome.reason
    threads = bot_threads(swarm)
    assert len(threads) == 3
    printed = next(c for c in threads if "print(" in c.body)
    assert printed.body.startswith("**Minor** · maintainability\n\n")
    assert "```suggestion\n```" in printed.body  # the fix deletes exactly that line
    assert all(
        posted_finding(
            {"body": c.body, "user": {"login": c.user_login}, "path": c.path}, REVIEWER_BOT
        )
        for c in threads
    )
    [summary] = summaries(swarm)
    assert summary_key(WIDGETS, PR) in summary.body
    assert "### swarm review summary" in summary.body and "**Minor** (3)" in summary.body
    for thread in threads:  # each finding links to its comment's line in the diff
        anchor = hashlib.sha256(thread.path.encode()).hexdigest()
        assert f"/pull/{PR}/files#diff-{anchor}R{thread.line})" in summary.body
    assert "model call(s)" in summary.body and "tokens" in summary.body
    [review] = bot_reviews(swarm, WIDGETS, PR)
    # The summary is written after the review, so a PR's first review points to the
    # conversation, and the summary links the review.
    assert re.fullmatch(
        r"Findings are inline; the summary of this PR is in its conversation\.\n\n<!--.*-->",
        review.body,
    )
    assert f"#pullrequestreview-{review.id})" in summary.body
    assert [f.severity for f in outcome.findings] == ["minor"] * 3


async def test_min_severity_major_keeps_minor_findings_out_of_the_review_and_counts_them(
    swarm: Swarm,
) -> None:
    task = swarm.pull_task(WIDGETS, PR, min_severity="major")
    outcome = await swarm.run(await swarm.dispatch(task))

    assert outcome.status == "succeeded" and outcome.posted, outcome.reason
    assert bot_threads(swarm) == []
    [summary] = summaries(swarm)
    assert "3 below `min_severity: major` (3 minor)" in summary.body
    assert "No open findings." in summary.body


async def test_a_push_that_fixes_a_line_resolves_its_thread_and_edits_the_summary(
    swarm: Swarm,
) -> None:
    first = head(swarm)
    await swarm.review(WIDGETS, PR)
    [summary] = summaries(swarm)
    edits = summary.edits
    new_head = push_without_the_print(swarm)

    task = swarm.pull_task(WIDGETS, PR, since_sha=first)
    outcome = await swarm.run(await swarm.dispatch(task))

    assert outcome.status == "succeeded" and outcome.posted, outcome.reason
    printed = next(c for c in bot_threads(swarm) if "print(" in c.body)
    assert printed.resolved_by == REVIEWER_BOT
    [reply] = replies(swarm, printed)
    assert reply.user_login == REVIEWER_BOT and new_head[:12] in reply.body
    still_open = [c for c in bot_threads(swarm) if c is not printed]
    assert len(still_open) == 2 and all(c.resolved_by is None for c in still_open)
    assert [c.id for c in summaries(swarm)] == [summary.id]  # edited in place, not posted again
    assert summary.edits > edits
    assert "Resolved by this push (1)" in summary.body and "**Minor** (2)" in summary.body
    assert f"`{new_head[:12]}`" in summary.body


async def test_a_lost_answer_to_the_summary_or_the_resolution_writes_each_once(
    swarm: Swarm,
) -> None:
    state = swarm.sandbox.state
    first = head(swarm)
    state.inject_failure(COMMENTS, status=502, method="POST", after_handling=True)
    await swarm.review(WIDGETS, PR)
    assert len(summaries(swarm)) == 1

    push_without_the_print(swarm)
    state.inject_failure(REPLIES, status=502, method="POST", after_handling=True)
    outcome = await swarm.run(await swarm.dispatch(swarm.pull_task(WIDGETS, PR, since_sha=first)))

    assert outcome.status == "succeeded", outcome.reason
    printed = next(c for c in bot_threads(swarm) if "print(" in c.body)
    assert printed.resolved_by == REVIEWER_BOT and len(replies(swarm, printed)) == 1
    assert len(summaries(swarm)) == 1


async def test_two_workers_at_once_write_one_summary_and_one_resolution(
    two_swarms: tuple[Swarm, Swarm],
) -> None:
    one, two = two_swarms
    try:
        first = head(one)
        sealed = [await s.dispatch(s.pull_task(WIDGETS, PR)) for s in two_swarms]
        await asyncio.gather(one.run(sealed[0]), two.run(sealed[1]))
        assert len(summaries(one)) == 1 and len(bot_reviews(one, WIDGETS, PR)) == 1

        push_without_the_print(one)
        task = one.pull_task(WIDGETS, PR, since_sha=first)
        sealed = [await s.dispatch(task) for s in two_swarms]
        await asyncio.gather(one.run(sealed[0]), two.run(sealed[1]))
    finally:
        for s in two_swarms:
            await s.runtime.aclose()

    printed = next(c for c in bot_threads(one) if "print(" in c.body)
    assert printed.resolved_by == REVIEWER_BOT and len(replies(one, printed)) == 1
    assert len(summaries(one)) == 1 and len(bot_reviews(one, WIDGETS, PR)) == 2
