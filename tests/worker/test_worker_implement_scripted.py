"""The scripted model as the writer, against the sandbox GitHub: it fixes the seeded bug it
recognises through the real tools (one draft pull request whose head passes the hidden test),
and opens nothing for a bug it does not recognise."""

from __future__ import annotations

from typing import Any

import pytest

from agents.work import Task
from sandbox.github.seed import (
    WIDGETS,
    WRITER_BOT,
    WRITER_BUG,
    WRITER_BUG_PATH,
    WRITER_SLUG,
    plant_writer_issue,
)
from tests.bwrap import require_bwrap
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio


async def implement(swarm: Swarm, number: int) -> Any:
    sealed = await swarm.dispatch(
        Task(kind="implement", repo=WIDGETS, number=number), role="implementer"
    )
    return await swarm.run(sealed)


def writers_pulls(swarm: Swarm) -> list[Any]:
    return [
        i
        for i in swarm.sandbox.state.repo(WIDGETS).pulls()
        if i.pull is not None and i.user_login == WRITER_BOT
    ]


async def test_the_scripted_writer_fixes_the_seeded_bug_in_one_signed_draft(swarm: Swarm) -> None:
    require_bwrap()
    number = plant_writer_issue(swarm.sandbox.state)

    outcome = await implement(swarm, number)

    assert outcome.status == "succeeded", outcome.reason
    [opened] = writers_pulls(swarm)
    assert opened.pull.draft
    head = swarm.sandbox.state.repo(WIDGETS).commits[opened.pull.head_sha]
    assert head.signed_by == WRITER_SLUG
    fixed = head.tree[WRITER_BUG_PATH]
    fixed = fixed.decode() if isinstance(fixed, bytes) else fixed
    assert "range(len(widgets))" in fixed and fixed != WRITER_BUG
    assert "Tests at the last run: **passing**" in (opened.body or "")


async def test_a_bug_the_scripted_writer_does_not_recognise_opens_nothing(swarm: Swarm) -> None:
    require_bwrap()
    state = swarm.sandbox.state
    plant_writer_issue(state)
    other = state.add_issue(WIDGETS, "`total_size()` is slow", "It feels slow on big lists.")

    outcome = await implement(swarm, other.number)

    assert outcome.status != "succeeded"
    assert writers_pulls(swarm) == []
