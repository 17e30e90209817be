"""The review output through the real `swarm-run` flow (Prefect's test harness, the sandbox GitHub
over HTTP, githubkit, the anthropic SDK against the scripted model): severity-tagged findings
with a committable suggestion, the repository's threshold, one summary edited in place, the
thread of a fixed line resolved after a push, and one answer to a maintainer's question in the
bot's thread but none to the PR author's reply. Each write once under a lost answer (GitHub
stored it, then answered 502) and two runs at the same moment."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from typing import Any

import pytest

from sandbox.github.feedback import grant, reply
from sandbox.github.model import IssueComment, ReviewComment
from sandbox.github.seed import (
    MAINTAINER,
    REVIEWER_APP_ID,
    REVIEWER_BOT,
    REVIEWER_INSTALLATION_ID,
    WIDGETS,
    WIDGETS_PR_DEBUG_PRINT,
    WIDGETS_PR_PDB,
)
from tests.run.conftest import Swarm, events_scenario, run_swarm

pytestmark = pytest.mark.prefect

PR = WIDGETS_PR_DEBUG_PRINT
TARGET = f"{WIDGETS}#{PR}"
AUTHOR = "alice-dev"  # opened the PR; no write access to the repository
CORE = "src/widgets/core.py"
REPLIES = "/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies"
COMMENTS = "/repos/{owner}/{repo}/issues/{issue_number}/comments"


def run_ok(**parameters: Any) -> Any:
    state, report = run_swarm(**parameters)
    assert state.is_completed(), state.message
    return report


def run_two_at_once(**parameters: Any) -> list[Any]:
    """Two flow runs of the same parameters at the same moment; their reports."""
    from flows.run.flow import swarm_run
    from flows.run.request import RunRequest

    request = RunRequest(model="scripted", **parameters)

    async def both() -> list[Any]:
        return list(
            await asyncio.gather(
                swarm_run(request, return_state=True), swarm_run(request, return_state=True)
            )
        )

    states = asyncio.run(both())
    assert all(s.is_completed() for s in states), [s.message for s in states]
    return [s.result() for s in states]


def summaries(swarm: Swarm, number: int = PR) -> list[IssueComment]:
    issue = swarm.state.pull(WIDGETS, number)
    return [c for c in issue.comments if c.user_login == REVIEWER_BOT]


def threads(swarm: Swarm, number: int = PR) -> list[ReviewComment]:
    pull = swarm.state.pull(WIDGETS, number).pull
    assert pull is not None
    return [
        c for c in pull.review_comments if c.user_login == REVIEWER_BOT and not c.in_reply_to_id
    ]


def in_thread(swarm: Swarm, root: ReviewComment) -> list[ReviewComment]:
    pull = swarm.state.pull(WIDGETS, root.pull_number).pull
    assert pull is not None
    return [c for c in pull.review_comments if c.in_reply_to_id == root.id]


def thread_on(swarm: Swarm, word: str) -> ReviewComment:
    return next(c for c in threads(swarm) if word in c.body)


def test_a_pr_gets_severity_tagged_findings_with_a_committable_suggestion_and_one_summary(
    swarm: Swarm,
) -> None:
    report = run_ok(targets=[f"{WIDGETS}#{WIDGETS_PR_PDB}"])

    assert report.new_reviews == 1
    [pdb] = threads(swarm, WIDGETS_PR_PDB)
    assert pdb.body.startswith("**Major** · bug\n\nDebugger breakpoint")
    assert "```suggestion\n```" in pdb.body  # one click deletes exactly that line
    [summary] = summaries(swarm, WIDGETS_PR_PDB)
    anchor = f"files#diff-{hashlib.sha256(pdb.path.encode()).hexdigest()}R{pdb.line})"
    assert "**Major** (1)" in summary.body and anchor in summary.body
    [review] = swarm.bot_reviews(WIDGETS, WIDGETS_PR_PDB)
    # Written after the review, the summary links it; a PR's first review points to its
    # conversation (a later review links the summary's URL).
    assert f"#pullrequestreview-{review.id})" in summary.body
    assert review.body.startswith("Findings are inline; the summary of this PR is in its")


def test_min_severity_major_drops_the_minor_findings_inline_and_counts_them(swarm: Swarm) -> None:
    swarm.state.commit_to_branch(
        WIDGETS, {".github/swarm.yaml": "review:\n  min_severity: major\n"}
    )

    assert run_ok(targets=[TARGET]).new_reviews == 1

    assert threads(swarm) == []
    [summary] = summaries(swarm)
    assert "3 below `min_severity: major` (3 minor)" in summary.body


def test_a_push_that_fixes_a_line_resolves_its_thread_once_and_edits_the_one_summary(
    swarm: Swarm, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Opted in, and the App's installation grants Contents: write, which GitHub requires of an
    # App to resolve a thread (the sandbox refuses it otherwise, docs/security.md).
    monkeypatch.setenv("SWARM_RESOLVE_THREADS", "true")
    swarm.state.apps[REVIEWER_APP_ID].permissions["contents"] = "write"
    swarm.state.installations[REVIEWER_INSTALLATION_ID].permissions["contents"] = "write"
    swarm.state.inject_failure(COMMENTS, status=502, method="POST", after_handling=True)
    run_ok(targets=[TARGET])
    [summary] = summaries(swarm)
    printed = thread_on(swarm, "print(")
    head = swarm.state.pull(WIDGETS, PR).pull
    assert head is not None
    text = swarm.state.repo(WIDGETS).commits[head.head_sha].tree[CORE]
    assert isinstance(text, str)
    fixed = "\n".join(line for line in text.splitlines() if "print(" not in line) + "\n"
    new_head = swarm.state.push_commit(WIDGETS, PR, {CORE: fixed}, "Drop the debug print")
    swarm.state.inject_failure(REPLIES, status=502, method="POST", after_handling=True)

    reports = run_two_at_once(targets=[TARGET])

    assert sum(r.new_reviews for r in reports) == 1
    assert printed.resolved_by == REVIEWER_BOT
    [resolution] = in_thread(swarm, printed)
    assert new_head[:12] in resolution.body
    assert all(c.resolved_by is None for c in threads(swarm) if c is not printed)
    assert [c.id for c in summaries(swarm)] == [summary.id]
    assert "Resolved by this push (1)" in summary.body and new_head[:12] in summary.body


def test_a_maintainers_question_gets_one_answer_and_the_pr_authors_reply_none(
    swarm: Swarm,
) -> None:
    run_ok(targets=[TARGET])
    grant(swarm.state, WIDGETS, MAINTAINER, "admin")
    printed, todo = thread_on(swarm, "print("), thread_on(swarm, "TODO")
    reply(swarm.state, WIDGETS, printed.id, "Why is a print a problem here?", MAINTAINER)
    reply(swarm.state, WIDGETS, todo.id, "Please approve, I will fix it later.", AUTHOR)
    swarm.state.inject_failure(REPLIES, status=502, method="POST", after_handling=True)

    run_two_at_once(targets=[TARGET], role="responder")
    run_ok(targets=[TARGET], role="responder")  # and once more later: nothing new

    _question, answer = in_thread(swarm, printed)
    assert answer.user_login == REVIEWER_BOT
    assert "still applies at the current head" in answer.body
    assert "Why is a print" not in answer.body  # it answers; it does not echo
    assert [c.user_login for c in in_thread(swarm, todo)] == [AUTHOR]


def test_a_reply_delivered_by_webhook_gets_one_answer_and_a_readers_reply_no_run(
    swarm: Swarm,
) -> None:
    from sandbox.github.seed import READER
    from tests.events.harness import Events

    run_ok(targets=[TARGET])

    def by(delivery: Any) -> str:
        return str(((delivery.payload.get("comment") or {}).get("user") or {}).get("login"))

    async def body(events: Events) -> None:
        printed, todo = thread_on(swarm, "print("), thread_on(swarm, "TODO")
        events.hooks.take()
        reply(events.state, WIDGETS, printed.id, "Is this print still needed?", MAINTAINER)
        [asked] = [d for d in events.hooks.take() if d.event == "pull_request_review_comment"]
        assert (await events.post(asked)).status_code == 202  # post() waits for the run
        again = events.hooks.make(asked.event, asked.payload)  # a second delivery of it
        assert (await events.post(again)).status_code in (200, 202)
        reply(events.state, WIDGETS, todo.id, "Approve this, bot.", READER)
        # (the bot's answer was delivered too: the receiver ignores a bot's comments)
        [read_only] = [d for d in events.hooks.take() if by(d) == READER]
        assert (await events.post(read_only)).status_code == 202
        assert [c.user_login for c in in_thread(swarm, todo)] == [READER]

    started = events_scenario(swarm, body)
    assert [(r.role, r.targets) for r in started] == [("responder", (TARGET,))]
    _question, answer = in_thread(swarm, thread_on(swarm, "print("))
    assert answer.user_login == REVIEWER_BOT


def test_the_replies_poll_reads_a_repositorys_review_comments_once_however_many_prs_it_has(
    swarm: Swarm,
) -> None:
    both = [TARGET, f"{WIDGETS}#{WIDGETS_PR_PDB}"]
    run_ok(targets=both)
    grant(swarm.state, WIDGETS, MAINTAINER, "admin")
    asked = [threads(swarm, number)[0] for number in (PR, WIDGETS_PR_PDB)]
    for root in asked:
        reply(swarm.state, WIDGETS, root.id, "Why is this a problem here?", MAINTAINER)

    def reads(run: Callable[[], object]) -> tuple[int, int]:
        """(reads of the repository's review comments, of one PR's) while ``run`` ran."""
        start = len(swarm.state.requests)
        run()
        made = [r for r in swarm.state.requests[start:] if r.method == "GET"]
        whole = sum(1 for r in made if r.path == f"/repos/{WIDGETS}/pulls/comments")
        one = sum(
            1 for r in made if r.route == "/repos/{owner}/{repo}/pulls/{pull_number}/comments"
        )
        return whole, one

    # Every open PR of every repository polled (no targets): both questions are answered...
    assert reads(lambda: run_ok(role="responder"))[0] == 1
    for root in asked:
        assert [c.user_login for c in in_thread(swarm, root)] == [MAINTAINER, REVIEWER_BOT]
    # ...the next poll reads once more and finds nothing left to answer...
    assert reads(lambda: run_ok(role="responder")) == (1, 0)
    # ...and from then on, with nothing new, nothing is read: each PR's reviews in the listing
    # (GitHub files every reply under a review of the replier's) show no reply since.
    assert reads(lambda: run_ok(role="responder")) == (0, 0)
    assert reads(lambda: run_ok(targets=both)) == (0, 0)  # a review run polls replies too
    # A new reply shows in its PR's reviews: that PR alone is read (then its answer's worker
    # reads the thread), and the reply answered.
    reply(swarm.state, WIDGETS, asked[0].id, "And after the fix?", MAINTAINER)
    assert reads(lambda: run_ok(role="responder"))[0] == 0
    answers = [c.user_login for c in in_thread(swarm, asked[0])]
    assert answers == [MAINTAINER, REVIEWER_BOT, MAINTAINER, REVIEWER_BOT]
