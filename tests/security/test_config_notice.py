"""An invalid ``.github/swarm.yaml`` is told once per pull request and version of the file, as the
bot: two runs at the same moment post one notice per PR (the store's claim, on SQLite and
PostgreSQL), a run whose store lost the first run's record finds the bot's own marker instead
of posting again, and a marker a PR author pastes into a comment of their own silences nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from agents.kinds.review import post_config_notices
from agents.planning.config_notice import ConfigNotice, notice_key
from agents.planning.repo_config import RepoConfigError, parse_repo_config
from agents.posting.keys import with_comment_marker
from sandbox.github.records import Rendezvous
from sandbox.github.seed import REVIEWER_BOT, WIDGETS, WIDGETS_PR_CLEAN, WIDGETS_PR_DEBUG_PRINT
from sandbox.server import SandboxServer
from tests.security.conftest import as_user
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio

COMMENTS = "/repos/{owner}/{repo}/issues/{issue_number}/comments"
PULLS = (WIDGETS_PR_DEBUG_PRINT, WIDGETS_PR_CLEAN)


def _notice(text: str = "skip:\n  draft: true\n") -> ConfigNotice:
    with pytest.raises(RepoConfigError) as caught:
        parse_repo_config(text)
    assert caught.value.digest is not None
    return ConfigNotice(WIDGETS, caught.value.digest, tuple(caught.value.problems), PULLS)


def _bot_notices(sandbox: SandboxServer, number: int) -> list[Any]:
    issue = sandbox.state.repo(WIDGETS).issues[number]
    return [c for c in issue.comments if c.user_login == REVIEWER_BOT]


def _posts(sandbox: SandboxServer) -> list[Any]:
    return [r for r in sandbox.state.requests if r.method == "POST" and r.route == COMMENTS]


async def test_two_runs_at_the_same_moment_post_one_notice_per_pull_request(
    two_swarms: tuple[Swarm, Swarm],
) -> None:
    sandbox = two_swarms[0].sandbox
    # Both runs look among the PR's comments before either posts: only the claim decides.
    sandbox.state.knobs.rendezvous = Rendezvous("GET", COMMENTS, parties=2)
    notice = _notice()
    try:
        await asyncio.gather(
            *(post_config_notices(s.runtime, "default", [notice]) for s in two_swarms)
        )
    finally:
        for s in two_swarms:
            await s.runtime.aclose()

    for number in PULLS:
        [comment] = _bot_notices(sandbox, number)
        assert ".github/swarm.yaml:2: skip.draft: unknown key" in comment.body
        assert notice_key(WIDGETS, number, notice.digest) in comment.body
    assert len(_posts(sandbox)) == len(PULLS)


async def test_a_second_run_and_a_run_with_a_lost_store_post_nothing_more(
    make_swarm: Callable[..., Swarm], tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    notice = _notice()
    first = make_swarm()
    await post_config_notices(first.runtime, "default", [notice])
    await post_config_notices(first.runtime, "default", [notice])
    await first.runtime.aclose()
    monkeypatch.setenv("SWARM_DATA_DIR", str(tmp_path / "fresh-store"))
    fresh = make_swarm()  # a store that never heard of the notices: the bot's markers decide
    await post_config_notices(fresh.runtime, "default", [notice])
    await fresh.runtime.aclose()

    assert [len(_bot_notices(first.sandbox, n)) for n in PULLS] == [1, 1]
    assert len(_posts(first.sandbox)) == len(PULLS)
    # A new version of the file, still invalid, is a new notice.
    again = make_swarm()
    await post_config_notices(again.runtime, "default", [_notice("roles: 3\n")])
    await again.runtime.aclose()
    assert [len(_bot_notices(first.sandbox, n)) for n in PULLS] == [2, 2]


async def test_a_marker_pasted_by_the_pr_author_does_not_silence_the_notice(
    swarm: Swarm,
) -> None:
    notice = _notice()
    number = WIDGETS_PR_DEBUG_PRINT
    fake = with_comment_marker("nothing to see", notice_key(WIDGETS, number, notice.digest))
    with as_user(swarm.sandbox, "alice-dev") as alice:
        posted = alice.post(f"/repos/{WIDGETS}/issues/{number}/comments", json={"body": fake})
        assert posted.status_code == 201

    await post_config_notices(swarm.runtime, "default", [notice])

    [comment] = _bot_notices(swarm.sandbox, number)
    assert "skip.draft: unknown key" in comment.body
    record = swarm.runtime.store.get_review_key(notice_key(WIDGETS, number, notice.digest))
    assert record is not None and record.state == "posted" and record.review_id == comment.id


async def test_a_dry_run_posts_no_notice(make_swarm: Callable[..., Swarm]) -> None:
    from flows.run.discovery import discover

    dry = make_swarm(dry_run=True)
    dry.sandbox.state.commit_to_branch(WIDGETS, {".github/swarm.yaml": "skip:\n  draft: 1\n"})
    try:
        found = await discover(dry.runtime, [WIDGETS], "reviewer", "summarizer", None, None)
    finally:
        await dry.runtime.aclose()

    assert found.config_errors[WIDGETS]
    assert _posts(dry.sandbox) == []
