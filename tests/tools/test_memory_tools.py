"""Memory tools: recall cites its sources, notes are the worker's own, progress is recorded."""

from __future__ import annotations

import pytest

from agents.tools import build_toolbox
from sandbox.github.seed import WIDGETS, WIDGETS_PR_DEBUG_PRINT
from tests.tools.conftest import MakeContext
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio


async def test_memory_search_quotes_each_hit_with_where_it_came_from(
    swarm: Swarm, tool_context: MakeContext
) -> None:
    fact = swarm.runtime.store.add_memory(
        "fact", "Widgets wants a regression test with every bug fix", author="alice", repo=WIDGETS
    )
    ctx = await tool_context(swarm.pull_task(WIDGETS, WIDGETS_PR_DEBUG_PRINT))
    toolbox = build_toolbox(ctx, ["memory_search", "memory_note", "record_progress"])
    noted = await toolbox.call("memory_note", {"note": "regression test asked for in #1"})
    assert noted.content.startswith("noted (note:")

    found = await toolbox.call("memory_search", {"query": "regression test"})
    assert found.content.startswith("<recall>\n") and found.content.endswith("\n</recall>")
    assert f"- (memory:{fact.id}) Widgets wants a regression test" in found.content
    assert "- (note:" in found.content
    nothing = await toolbox.call("memory_search", {"query": "kubernetes"})
    assert nothing.content == "No memory matches."

    await toolbox.call("record_progress", {"note": "diff read", "kind": "checkpoint"})
    progress = [
        e for e in swarm.runtime.store.get_transcript(ctx.worker_id) if e.kind == "progress"
    ]
    assert [e.content for e in progress] == [{"kind": "checkpoint", "text": "diff read"}]


async def test_history_search_finds_the_sessions_own_record_and_refuses_the_run_unless_allowed(
    swarm: Swarm, tool_context: MakeContext
) -> None:
    ctx = await tool_context(swarm.pull_task(WIDGETS, WIDGETS_PR_DEBUG_PRINT))
    toolbox = build_toolbox(ctx, ["history_search", "record_progress"])
    await toolbox.call("record_progress", {"note": "read the scaling diff", "kind": "decision"})

    found = await toolbox.call("history_search", {"query": "scaling", "include_tool_events": True})
    assert found.summary == "1 hit(s)" and "read the scaling diff" in found.content
    paged = await toolbox.call("history_search", {"query": "scaling", "before_seq": 1})
    assert paged.summary == "0 hit(s)"
    refused = await toolbox.call("history_search", {"query": "scaling", "scope": "run"})
    assert refused.is_error and "scope 'run' is not allowed" in refused.content
