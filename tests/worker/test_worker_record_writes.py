"""A worker's record goes through the store's writer thread, and the worker reports its outcome
only once all of it is in the store: in order, each write once, whichever way it ended (on
SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Callable

import httpx2
import pytest

from agents.llm.client import LLMClient
from agents.store import Store
from sandbox.github.seed import WIDGETS, WIDGETS_PR_DEBUG_PRINT
from tests.store.backends import StoreTarget, pg_session_url, sqlite_template, store_target
from tests.store.test_writer import failing_statements
from tests.worker.conftest import Swarm
from tests.worker.fake_models import message, tool_use

__all__ = ["pg_session_url", "sqlite_template", "store_target"]

pytestmark = pytest.mark.anyio


@pytest.fixture
def swarm_on(
    store_target: StoreTarget, make_swarm: Callable[..., Swarm], monkeypatch: pytest.MonkeyPatch
) -> Swarm:
    if store_target.url is not None:
        monkeypatch.setenv("SWARM_STORE_URL", store_target.url)
    return make_swarm()


def _model_that_fails_on_its_second_call() -> LLMClient:
    calls: list[int] = []

    def answer(_request: httpx2.Request) -> httpx2.Response:
        calls.append(1)
        if len(calls) == 1:
            return httpx2.Response(200, json=message([tool_use("get_pull", {})]))
        error = {"type": "invalid_request_error", "message": "malformed request"}
        return httpx2.Response(400, json={"type": "error", "error": error})

    transport = httpx2.MockTransport(answer)
    return LLMClient(api_key="test-model-key", http_client=httpx2.AsyncClient(transport=transport))


def _kinds_and_seqs(store: Store, worker_id: str) -> tuple[list[str], list[int]]:
    events = store.get_transcript(worker_id)
    return [e.kind for e in events], [e.seq for e in events]


async def test_a_worker_reports_only_once_its_whole_record_is_in_the_store(
    swarm_on: Swarm, store_target: StoreTarget
) -> None:
    try:
        outcome = await swarm_on.review(WIDGETS, WIDGETS_PR_DEBUG_PRINT)
        with store_target.open() as elsewhere:  # what another process sees right now
            kinds, seqs = _kinds_and_seqs(elsewhere, outcome.worker_id)
            row = elsewhere.get_worker(outcome.worker_id)
            llm_calls = elsewhere.list_llm_calls(outcome.worker_id)
            github = [a for a in elsewhere.audit() if a.worker_id == outcome.worker_id]
    finally:
        await swarm_on.runtime.aclose()
    assert outcome.status == "succeeded", outcome.reason
    assert seqs == list(range(1, len(seqs) + 1))
    assert kinds[0] == "status" and kinds[-1] == "status"
    assert kinds.count("assistant_turn") == outcome.llm_calls == len(llm_calls)
    assert kinds.count("tool_call") == kinds.count("tool_result") > 0
    assert row.status == "succeeded" and row.finished_at is not None
    assert row.last_seq == len(seqs)
    # the review, then the summary written once after it: each in the audit log once
    assert [(a.method, a.route) for a in github] == [
        ("POST", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"),
        ("POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ]


async def test_a_worker_whose_model_fails_mid_session_keeps_every_turn_before_it_once(
    swarm_on: Swarm,
) -> None:
    swarm_on.use_model(_model_that_fails_on_its_second_call())
    try:
        outcome = await swarm_on.review(WIDGETS, WIDGETS_PR_DEBUG_PRINT)
        kinds, seqs = _kinds_and_seqs(swarm_on.runtime.store, outcome.worker_id)
        last = swarm_on.runtime.store.get_transcript(outcome.worker_id)[-1]
        row = swarm_on.runtime.store.get_worker(outcome.worker_id)
    finally:
        await swarm_on.runtime.aclose()
    assert outcome.status == "failed"
    assert outcome.reason is not None and outcome.reason.startswith("model error")
    assert seqs == list(range(1, len(seqs) + 1))
    assert kinds[-6:] == [
        "user_turn",
        "assistant_turn",
        "tool_call",
        "tool_result",
        "user_turn",
        "status",
    ]
    assert kinds.count("assistant_turn") == 1
    assert last.content["status"] == "failed"
    assert row.status == "failed"


async def test_a_worker_whose_record_cannot_be_written_reports_that_it_failed(
    swarm_on: Swarm,
) -> None:
    store = swarm_on.runtime.store
    try:
        with failing_statements(store, "INSERT INTO llm_calls", times=1000) as failed:
            outcome = await swarm_on.review(WIDGETS, WIDGETS_PR_DEBUG_PRINT)
        kinds, seqs = _kinds_and_seqs(store, outcome.worker_id)
        llm_calls = store.list_llm_calls(outcome.worker_id)
    finally:
        await swarm_on.runtime.aclose()
    assert failed  # every attempt was refused
    assert outcome.status == "failed"
    # Found by the flush a tool makes mid-session (the worker ends there, as a synchronous
    # write would have ended it) or by the flush before the outcome: either way, said.
    assert outcome.reason is not None
    assert outcome.reason.startswith(
        ("its record could not be written: OperationalError", "worker crashed: OperationalError")
    )
    assert llm_calls == []
    assert seqs == list(range(1, len(seqs) + 1))  # the transcript itself is whole
    assert kinds[-1] == "status"
