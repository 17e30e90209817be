"""A memory a person adds with `swarm memory add` is in the next worker's prompt (the request
the scripted model received over HTTP); removed with `swarm memory rm`, it is gone from the
next one. Runtime records of earlier workers never are."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agents.store import NewEvent, NewWorker
from flows.cli.app import app
from sandbox.github.seed import WIDGETS, WIDGETS_PR_CLEAN, WIDGETS_PR_DEBUG_PRINT
from tests.memory.real_worker import system_text
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio

FACT = "Widgets ships a CLI: print() to stdout is its user interface."
HIDDEN = "HIDDEN-RUNTIME-PAYLOAD-b41c"


def cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), terminal_width=200)
    assert result.exit_code == 0, result.output
    return result.output.strip()


async def test_a_cli_memory_reaches_the_next_worker_and_leaves_it_once_deleted(
    backend_swarm: Swarm,
) -> None:
    swarm = backend_swarm
    added = cli("memory", "add", FACT, "--repo", WIDGETS, "--role", "reviewer")
    memory_id = added.rsplit(" ", 1)[1]
    assert added == f"added memory {memory_id}"

    # an earlier worker's tool payload in the shared store: a runtime record, never a memory
    earlier = swarm.runtime.store.create_worker(NewWorker(swarm.run_id, role_chain=["reviewer"]))
    swarm.runtime.store.append_events(
        earlier, [NewEvent("tool_result", {"tool": "read_file", "output": HIDDEN})]
    )

    outcome = await swarm.review(WIDGETS, WIDGETS_PR_DEBUG_PRINT)
    assert outcome.status == "succeeded", outcome.reason
    requests = list(swarm.scripted.requests)
    assert all(FACT in system_text(r) for r in requests)
    assert f"[fact #{memory_id}]" in system_text(requests[0])
    assert HIDDEN not in json.dumps(requests)

    assert cli("memory", "rm", memory_id) == f"deleted memory {memory_id}"
    outcome = await swarm.review(WIDGETS, WIDGETS_PR_CLEAN)
    assert outcome.status == "succeeded", outcome.reason
    later = swarm.scripted.requests[len(requests) :]
    assert later and not any(FACT in json.dumps(r) for r in later)
    assert HIDDEN not in json.dumps(later)
