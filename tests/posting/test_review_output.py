"""What a review posts, through the real worker (sandbox GitHub over HTTP, githubkit, the
anthropic SDK against the scripted model): severity-tagged inline findings with a committable
suggestion, the repository's threshold, one summary comment kept up to date, and the threads
of fixed findings resolved after a push where the operator opted in and the App holds Contents:
write (GitHub refuses the mutation without it, as the sandbox does), left open with a "fixed at"
reply where not. Also under lost answers and two workers at once."""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Callable

import pytest

from agents.posting.keys import summary_key
from agents.posting.render import posted_finding
from agents.work import RepoRules
from sandbox.github.model import IssueComment, ReviewComment
from sandbox.github.seed import (
    REVIEWER_APP_ID,
    REVIEWER_BOT,
    REVIEWER_INSTALLATION_ID,
    WIDGETS,
    WIDGETS_PR_DEBUG_PRINT,
)
from sandbox.github.state import SandboxState
from sandbox.server import SandboxServer
from tests.security.conftest import bot_reviews
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio

PR = WIDGETS_PR_DEBUG_PRINT
CORE = "src/widgets/core.py"
COMMENTS = "/repos/{owner}/{repo}/issues/{issue_number}/comments"
REPLIES = "/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies"


def give_contents_write(state: SandboxState, *, installation: bool = True) -> None:
    """The operator added Contents: write to the App; the installation's owner accepted it
    (``installation``) or not yet."""
    state.apps[REVIEWER_APP_ID].permissions["contents"] = "write"
    if installation:
        state.installations[REVIEWER_INSTALLATION_ID].permissions["contents"] = "write"


@pytest.fixture
def app_resolves(sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opted in (SWARM_RESOLVE_THREADS) and the App's installation grants Contents: write;
    requested before the swarm fixtures, which read the settings when they are made."""
    give_contents_write(sandbox.state)
    monkeypatch.setenv("SWARM_RESOLVE_THREADS", "true")


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
    task = swarm.pull_task(WIDGETS, PR, rules=RepoRules(min_severity="major"))
    outcome = await swarm.run(await swarm.dispatch(task))

    assert outcome.status == "succeeded" and outcome.posted, outcome.reason
    assert bot_threads(swarm) == []
    [summary] = summaries(swarm)
    assert "3 below `min_severity: major` (3 minor)" in summary.body
    assert "No open findings." in summary.body


async def test_a_push_that_fixes_a_line_resolves_its_thread_and_edits_the_summary(
    app_resolves: None, swarm: Swarm
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
    # Resolved by a token of its own (Contents: write on this one repository), revoked at
    # once; no worker's token ever held Contents: write.
    wide = [
        t for t in swarm.sandbox.state.tokens.values() if t.permissions.get("contents") == "write"
    ]
    assert (
        len(wide) == 1
        and wide[0].revoked
        and wide[0].repository_ids == {swarm.sandbox.state.repo(WIDGETS).id}
    )
    assert outcome.status == "succeeded"


async def fixed_but_left_open(swarm: Swarm) -> tuple[ReviewComment, str]:
    """The PR reviewed, the print dropped by a push and reviewed again: the debug print's
    thread, and the new head."""
    first = head(swarm)
    await swarm.review(WIDGETS, PR)
    new_head = push_without_the_print(swarm)
    task = swarm.pull_task(WIDGETS, PR, since_sha=first)
    outcome = await swarm.run(await swarm.dispatch(task))
    assert outcome.status == "succeeded" and outcome.posted, outcome.reason
    printed = next(c for c in bot_threads(swarm) if "print(" in c.body)
    return printed, new_head


def assert_left_open_and_said_fixed(swarm: Swarm, printed: ReviewComment, new_head: str) -> None:
    assert printed.resolved_by is None
    [reply] = replies(swarm, printed)
    assert reply.user_login == REVIEWER_BOT
    assert reply.body.startswith(f"Fixed at `{new_head[:12]}`")
    assert "Resolved" not in reply.body
    [summary] = summaries(swarm)
    assert "Resolved by this push" not in summary.body
    assert "Fixed by this push, thread left open (1)" in summary.body
    assert "**Minor** (2)" in summary.body  # the fixed finding is no longer open


async def test_without_the_opt_in_a_fixed_findings_thread_says_fixed_at_the_sha_and_stays_open(
    sandbox: SandboxServer, swarm: Swarm
) -> None:
    give_contents_write(sandbox.state)  # granted, but the operator did not opt in
    printed, new_head = await fixed_but_left_open(swarm)

    assert_left_open_and_said_fixed(swarm, printed, new_head)
    # No token with Contents: write was ever minted.
    assert all(t.permissions.get("contents") != "write" for t in sandbox.state.tokens.values())
    # The next run leaves it be: one reply, still open, the summary still not "resolved".
    again = await swarm.run(await swarm.dispatch(swarm.pull_task(WIDGETS, PR, rerun="again")))
    assert again.status == "succeeded", again.reason
    assert len(replies(swarm, printed)) == 1 and printed.resolved_by is None
    assert "Resolved by this push" not in summaries(swarm)[0].body


async def test_opted_in_without_contents_write_granted_a_fixed_findings_thread_stays_open(
    sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch, make_swarm: Callable[..., Swarm]
) -> None:
    # The App asks for Contents: write; the installation's owner has not accepted it yet.
    give_contents_write(sandbox.state, installation=False)
    monkeypatch.setenv("SWARM_RESOLVE_THREADS", "true")
    swarm = make_swarm()
    try:
        printed, new_head = await fixed_but_left_open(swarm)
    finally:
        await swarm.runtime.aclose()

    assert_left_open_and_said_fixed(swarm, printed, new_head)


async def test_a_lost_answer_to_the_summary_or_the_resolution_writes_each_once(
    app_resolves: None, swarm: Swarm
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
    app_resolves: None, two_swarms: tuple[Swarm, Swarm]
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
