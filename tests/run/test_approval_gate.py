"""Plan approval end to end through the real Prefect engine, the sandbox GitHub serving the
reviewer's and the writer's Apps, and the scripted model, on SQLite and PostgreSQL.

A repository whose base branch sets ``writer.approval`` gets the writer's plan on the issue
once, and its deployment run suspends: no branch, no commit, its store row "waiting". The run
is executed here as a worker machine executes a deployment's flow run (``run_flow`` on the
flow run Prefect hands out), again after it is resumed, so Prefect runs it from the start as it
does in production. A decision comes through Prefect's resume API with ``run_input`` (what the
UI's form sends), or as ``/swarm approve`` through the webhook receiver; a reader's comment
does nothing; a rejection with a note plans once more, a second one stops; a wait that times
out fails closed and says so on the issue once.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from agents.kinds.implement import LABEL
from agents.writer.approval import gate_key
from sandbox.github.seed import (
    MAINTAINER,
    READER,
    WIDGETS,
    WRITER,
    WRITER_BOT,
    WRITER_TEST_CONFIG,
    plant_writer_issue,
)
from tests.browser import Browser
from tests.events.harness import Events
from tests.run import test_implement_flow
from tests.run.conftest import Swarm, run_swarm

# The runs' store, on SQLite and on PostgreSQL: the implement flow tests' fixture.
store = test_implement_flow.store
ROLE = "implementer"
REPLAN_NOTE = "Say which test covers the last widget."


def gated_issue(swarm: Swarm, timeout_s: int = 3600) -> int:
    """The writer's seeded issue, labelled by the maintainer, in a repository that asks for
    plan approval."""
    number = plant_writer_issue(swarm.state)
    config = f"writer:\n  approval: true\n  approval_timeout_seconds: {timeout_s}\n"
    swarm.state.commit_to_branch(WIDGETS, {".github/swarm.yaml": WRITER_TEST_CONFIG + config})
    swarm.state.label_issue(WIDGETS, number, LABEL, by=MAINTAINER)
    return number


async def _deployment_run() -> uuid.UUID:
    from prefect.client.orchestration import get_client

    from flows.run.flow import swarm_run
    from flows.run.request import RunRequest

    request = RunRequest(role=ROLE, repos=[WIDGETS], model="scripted")
    async with get_client() as client:
        flow_id = await client.create_flow(swarm_run)
        deployment = await client.create_deployment(
            flow_id=flow_id,
            name=f"gate-{uuid.uuid4().hex[:8]}",
            entrypoint="flows.run.flow:swarm_run",
        )
        run = await client.create_flow_run_from_deployment(
            deployment, parameters=request.parameters()
        )
    return run.id


def start_deployment_run() -> uuid.UUID:
    """A flow run of a ``swarm-run`` deployment, as a schedule or ``run_deployment`` makes it."""
    return asyncio.run(_deployment_run())


def execute(flow_run_id: uuid.UUID) -> str:
    """Run the flow run here, as a worker machine runs what Prefect hands it: "suspended"
    when it suspends, else its final state's type."""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import Pause
    from prefect.flow_engine import run_flow

    from flows.run.flow import swarm_run

    async def main() -> str:
        async with get_client() as client:
            flow_run = await client.read_flow_run(flow_run_id)
        try:
            # As the engine's entry point runs a deployment's flow run: its parameters from it.
            running: Any = run_flow(swarm_run, flow_run=flow_run, return_type="state")
            state = await running
        except Pause:
            return "suspended"
        return str(state.type.value)

    return asyncio.run(main())


def flow_state(flow_run_id: uuid.UUID) -> Any:
    from prefect.client.orchestration import get_client

    async def read() -> Any:
        async with get_client() as client:
            return (await client.read_flow_run(flow_run_id)).state

    return asyncio.run(read())


def resume(flow_run_id: uuid.UUID, **decision: Any) -> None:
    """A decision through Prefect's API, as the UI's form on the suspended run sends it."""
    from prefect.client.orchestration import get_client

    async def send() -> None:
        async with get_client() as client:
            await client.resume_flow_run(flow_run_id, run_input=decision)

    asyncio.run(send())


def open_store() -> Any:
    from agents.settings.model import load_settings
    from agents.store import Store

    settings = load_settings()
    return Store.open(settings.store_url, settings.data_dir)


def gate_row(number: int) -> Any:
    with open_store() as opened:
        return opened.get_review_key(gate_key(WIDGETS, number, ROLE))


def run_row(flow_run_id: uuid.UUID) -> Any:
    with open_store() as opened:
        return opened.run_for_flow_run(str(flow_run_id))


def writer_comments(swarm: Swarm, number: int) -> list[str]:
    issue = swarm.state.repo(WIDGETS).issues[number]
    return [c.body for c in issue.comments if c.user_login == WRITER_BOT]


def writers_pulls(swarm: Swarm) -> list[Any]:
    return test_implement_flow.writers_pulls(swarm)


def branches(swarm: Swarm) -> list[str]:
    return test_implement_flow.branches(swarm)


def suspended_at_the_gate(swarm: Swarm, number: int) -> uuid.UUID:
    """A deployment run of the writer, run until it waits: its plan posted once, nothing
    written, its row "waiting", its gate naming it."""
    flow_run = start_deployment_run()
    assert execute(flow_run) == "suspended"
    assert flow_state(flow_run).is_paused()
    [plan] = writer_comments(swarm, number)
    assert "The swarm's writer plans to implement this issue" in plan
    assert "`largest`" in plan and "/swarm approve" in plan
    assert branches(swarm) == [] and writers_pulls(swarm) == []
    # The writer bot's one write so far is that comment: planning wrote nothing, not a branch.
    [write] = swarm.writes_by(WRITER_BOT)
    assert (write.method, write.route) == (
        "POST",
        "/repos/{owner}/{repo}/issues/{issue_number}/comments",
    )
    assert run_row(flow_run).status == "waiting"
    gate = gate_row(number)
    assert gate.state == "waiting" and gate.worker_id == str(flow_run)
    return flow_run


def rejected_once(flow_run: uuid.UUID) -> None:
    """A rejection with a note, and the run resumed: it plans again and waits again."""
    resume(flow_run, approve=False, note=REPLAN_NOTE)
    assert execute(flow_run) == "suspended"


@pytest.fixture
def waiting(swarm: Swarm, store: str) -> tuple[int, uuid.UUID]:
    """(the issue, the deployment run suspended at its gate), on either store."""
    number = gated_issue(swarm)
    return number, suspended_at_the_gate(swarm, number)


def test_a_plan_approved_through_prefects_form_is_written_and_posted_once(
    swarm: Swarm, waiting: tuple[int, uuid.UUID]
) -> None:
    number, flow_run = waiting

    resume(flow_run, approve=True, note="")
    assert execute(flow_run) == "COMPLETED"

    [opened] = writers_pulls(swarm)
    assert opened.pull.draft and opened.pull.head_ref == f"swarm/issue-{number}"
    assert "`largest`" in (opened.body or "")  # the approved plan is the body's plan
    assert len(writer_comments(swarm, number)) == 1, "the plan was posted again on resume"
    row = run_row(flow_run)
    assert row.status == "succeeded"
    with open_store() as opened_store:
        assert len([r for r in opened_store.list_runs() if r.prefect_flow_run_id]) == 1
    assert gate_row(number).state == "approved"


def test_a_plan_approved_by_a_writers_comment_is_written_and_a_readers_comment_does_nothing(
    swarm: Swarm, waiting: tuple[int, uuid.UUID]
) -> None:
    number, flow_run = waiting

    async def comment(events: Events, who: str, text: str) -> None:
        events.state.add_comment(WIDGETS, number, text, author=who)
        [delivery] = [d for d in events.hooks.take() if d.event == "issue_comment"]
        response = await events.post(delivery)
        assert response.status_code == 202, response.text

    async def reader(events: Events) -> None:
        await comment(events, READER, "/swarm approve")
        assert events.bot_writes() == [], "a reader's comment was answered"

    with_receiver(swarm, reader)
    assert flow_state(flow_run).is_paused(), "a reader's comment resumed the run"
    assert gate_row(number).state == "waiting"

    async def writer(events: Events) -> None:
        await comment(events, WRITER, "/swarm approve")

    with_receiver(swarm, writer)
    assert not flow_state(flow_run).is_paused()
    assert execute(flow_run) == "COMPLETED"
    assert len(writers_pulls(swarm)) == 1
    assert run_row(flow_run).status == "succeeded"


def test_a_rejection_with_a_note_plans_once_more_and_the_second_plan_is_written(
    swarm: Swarm, waiting: tuple[int, uuid.UUID]
) -> None:
    number, flow_run = waiting

    rejected_once(flow_run)

    _first, second = writer_comments(swarm, number)
    assert "planned again after a rejection" in second
    assert "Revised after the maintainer's note" in second
    assert branches(swarm) == [] and writers_pulls(swarm) == []
    assert run_row(flow_run).status == "waiting"

    resume(flow_run, approve=True, note="")
    assert execute(flow_run) == "COMPLETED"
    [opened] = writers_pulls(swarm)
    assert "Revised after the maintainer's note" in (opened.body or "")
    assert len(writer_comments(swarm, number)) == 2


def test_a_second_rejection_stops_with_nothing_written_and_says_so(
    swarm: Swarm, waiting: tuple[int, uuid.UUID]
) -> None:
    number, flow_run = waiting
    rejected_once(flow_run)

    resume(flow_run, approve=False, note="No.")
    assert execute(flow_run) == "COMPLETED"

    *_, stopped = writer_comments(swarm, number)
    assert "rejected twice" in stopped and "nothing was written" in stopped
    assert len(writer_comments(swarm, number)) == 3
    assert branches(swarm) == [] and writers_pulls(swarm) == []
    assert gate_row(number).state == "rejected"
    report = run_row(flow_run).totals["report"]
    assert [o["code"] for o in report["outcomes"] if o["worker_id"] == "-"] == ["plan_rejected"]
    # A scheduled run later leaves the issue alone: a person asks again.
    state, later = run_swarm(role=ROLE, repos=(WIDGETS,))
    assert state.is_completed(), state.message
    assert [o.code for o in later.outcomes] == ["plan_rejected"]
    assert later.headline().endswith("1 plan(s) not approved by a maintainer: nothing written")
    assert len(writer_comments(swarm, number)) == 3 and writers_pulls(swarm) == []


def test_a_plan_no_one_decides_on_fails_closed_and_says_so_once(swarm: Swarm, store: str) -> None:
    number = gated_issue(swarm, timeout_s=2)
    flow_run = suspended_at_the_gate(swarm, number)
    time.sleep(3)

    for _ in range(2):  # the next implementer runs (a schedule's) find it timed out
        state, _report = run_swarm(role=ROLE, repos=(WIDGETS,))
        assert state.is_completed(), state.message

    _plan, timed_out = writer_comments(swarm, number)
    assert "nothing was written" in timed_out and "within 2 second(s)" in timed_out
    assert branches(swarm) == [] and writers_pulls(swarm) == []
    assert flow_state(flow_run).is_failed()
    row = run_row(flow_run)
    assert row.status == "failed" and row.totals["code"] == "plan_timed_out"
    assert gate_row(number).state == "timed_out"
    # Too late: Prefect takes no decision on a failed run, and the writer never writes.
    resume(flow_run, approve=True, note="")
    assert flow_state(flow_run).is_failed()
    assert writers_pulls(swarm) == []


def test_a_repository_that_asks_for_no_approval_costs_the_gate_no_token(swarm: Swarm) -> None:
    """Its file says nothing of approval: discovery read that once with its own token, and the
    run mints the writer's App two tokens (discovery's, the worker's), none for a gate."""
    from tests.bwrap import require_bwrap

    require_bwrap()
    test_implement_flow.labelled_issue(swarm)

    state, report = test_implement_flow.implement_run()

    assert state.is_completed(), state.message
    assert [o.status for o in report.outcomes] == ["succeeded"]
    minted = [
        t.permissions
        for t in swarm.state.tokens.values()
        if t.kind == "installation" and t.login == WRITER_BOT
    ]
    assert len(minted) == 2, minted
    # Discovery's reads nothing it may write; the worker's is the role's own: no third token
    # that may comment on the issue and not push (the gate's).
    assert [p for p in minted if p.get("issues") == "write" and p.get("contents") != "write"] == []


def with_receiver(swarm: Swarm, body: Any) -> None:
    """``body`` against a webhook receiver wired as ``swarm webhook serve`` wires it, over the
    runs' store (its runs are recorded, not started: a decision starts no run)."""
    from tests.events.harness import receiver_over

    async def main() -> None:
        async with _store() as opened, receiver_over(swarm.server, opened) as events:
            await body(events)
            assert events.started.requests == [], "a decision started a run"

    asyncio.run(main())


@asynccontextmanager
async def _store() -> AsyncIterator[Any]:
    opened = open_store()
    try:
        yield opened
    finally:
        opened.close()


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_waiting_run_shows_the_decision_form_in_the_prefect_ui(
    swarm: Swarm, browser: Browser, screenshots: Path, prefect_api_url: str
) -> None:
    """What a maintainer sees: the suspended run in Prefect's UI (the session's server is a full
    ``prefect server start``, tests/prefect_fixtures.py, which serves the UI), its Resume button,
    and the form made from :class:`flows.run.gate.PlanDecision`."""
    number = gated_issue(swarm)
    flow_run = suspended_at_the_gate(swarm, number)
    ui = prefect_api_url.removesuffix("/api")
    page = browser.page(f"{ui}/runs/flow-run/{flow_run}")
    page.wait_for_text(["swarm implementer over acme/widgets", "Suspended"], timeout=120)
    page.click_text("Resume")
    # The form's fields and their descriptions, from PlanDecision's schema.
    page.wait_for_text(
        ["Resume Flow Run", "Approve the plan", "Note", "For a rejection"], timeout=60
    )
    page.screenshot(screenshots / "plan-approval-form.png")
    assert flow_state(flow_run).is_paused(), "opening the form decided something"
