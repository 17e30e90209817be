"""The triager acts as the second App identity: labels and one comment on an issue."""

from __future__ import annotations

import pytest

from agents.work import Task
from sandbox.github.seed import WIDGETS, WIDGETS_ISSUE_DOCS
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio


async def test_triager_labels_and_comments_once_as_its_own_bot(swarm: Swarm) -> None:
    task = Task(kind="triage_issue", repo=WIDGETS, number=WIDGETS_ISSUE_DOCS)
    sealed = await swarm.dispatch(task, role="triager")
    assert sealed.envelope.identity.expected_login == "swarm-triage[bot]"
    assert "pull_requests" not in sealed.envelope.identity.permissions

    outcome = await swarm.run(sealed)

    assert outcome.status == "succeeded", outcome.reason
    assert outcome.identity_login == "swarm-triage[bot]"
    issue = swarm.sandbox.state.repo(WIDGETS).issues[WIDGETS_ISSUE_DOCS]
    assert issue.labels, "the triager added no label"
    assert [c.user_login for c in issue.comments] == ["swarm-triage[bot]"]
    writers = {r.login for r in swarm.writes()}
    assert writers == {"swarm-triage[bot]"}
