"""A PR command's focus on the real path: `/swarm review security` from a writer is delivered as
a signed webhook, the receiver starts a real `swarm-run` flow run, and the focus reaches the
review's model calls as a call overlay (a system block after the cached prefix, resolved
call > session > agent), on exactly the calls it scopes and in no message. The model is the
scripted one behind `ANTHROPIC_BASE_URL`: assertions read the requests it received over HTTP."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from agents.store import Store
from flows.webhook.enqueue import run_flow_here
from sandbox.github.seed import GADGETS, GADGETS_PR_LARGE, WIDGETS, WRITER
from sandbox.github.seed import WIDGETS_PR_DEBUG_PRINT as PR
from sandbox.model import ScriptedModel
from sandbox.model.server import ScriptedServer
from tests.events.harness import receiver_over
from tests.run.conftest import Swarm, run_swarm

pytestmark = pytest.mark.prefect

MODEL = "claude-sonnet-4-6"
FOCUS = '<role id="security-reviewer" scope="call">'
SESSION = '<role id="reviewer" scope="session">'


@pytest.fixture
def claude(swarm: Swarm, monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedModel]:
    model = ScriptedModel()
    with ScriptedServer(model) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield model


def overlays(request: dict[str, Any]) -> list[str]:
    """System blocks after the cached prefix (which ends at the block with cache_control)."""
    blocks = request["system"]
    last = max(i for i, b in enumerate(blocks) if "cache_control" in b)
    return [str(b["text"]) for b in blocks[last + 1 :]]


def in_messages(request: dict[str, Any]) -> bool:
    text = json.dumps(request["messages"])
    return 'scope=\\"call\\"' in text or 'role id=\\"security-reviewer' in text


async def command_then_push(swarm: Swarm, claude: ScriptedModel) -> int:
    """A writer's `/swarm review security`, then a push, each delivered and run as a real flow
    run; how many model requests the command's run made."""
    with Store.open(None, swarm.data_dir) as store:
        async with receiver_over(swarm.server, store) as events:
            events.enqueuer.runner = lambda r: run_flow_here(r.model_copy(update={"model": MODEL}))
            events.state.add_comment(WIDGETS, PR, "/swarm review security", author=WRITER)
            [command] = events.hooks.take()
            assert (await events.post(command)).status_code == 202  # post() waits for the run
            focused = len(claude.requests)
            events.state.push_commit(WIDGETS, PR, {"NOTES.md": "x\n"})
            # the review's summary comment was delivered too (as the bot's: ignored)
            [push] = [d for d in events.hooks.take() if d.event == "pull_request"]
            assert (await events.post(push)).status_code == 202
    return focused


def test_a_review_commands_focus_is_a_call_overlay_on_that_review_only(
    swarm: Swarm, claude: ScriptedModel
) -> None:
    focused = asyncio.run(command_then_push(swarm, claude))
    command_calls, push_calls = claude.requests[:focused], claude.requests[focused:]
    assert command_calls and push_calls
    assert all(overlays(r) == [overlays(command_calls[0])[0]] for r in command_calls)
    assert overlays(command_calls[0])[0].startswith(FOCUS)
    assert all(overlays(r) == [] for r in push_calls)
    assert not any(in_messages(r) for r in claude.requests)
    with Store.open(None, swarm.data_dir) as store:
        workers = store.list_workers()
        chains = [tuple(c.role_chain) for w in workers for c in store.list_llm_calls(w.id)]
        # the stored history (user and assistant turns, tool calls) holds no overlay either
        stored = json.dumps([e.content for w in workers for e in store.get_transcript(w.id)])
    assert set(chains) == {("security-reviewer", "reviewer"), ("reviewer",)}
    assert stored.count("{") > 10 and 'scope=\\"call\\"' not in stored
    assert "# Security reviewer" not in stored
    assert len(swarm.bot_reviews(WIDGETS, PR)) == 2


def test_a_focus_lies_over_the_session_overlay_of_the_reviewers_and_not_their_summarizer(
    swarm: Swarm, claude: ScriptedModel
) -> None:
    state, report = run_swarm(
        targets=[f"{GADGETS}#{GADGETS_PR_LARGE}"],
        model=MODEL,
        overlay="reviewer",
        focus="security-reviewer",
        shard_threshold_files=30,
        shard_size=15,
    )
    assert state.is_completed(), state.message
    assert sorted(o.role for o in report.outcomes) == ["reviewer"] * 3 + ["summarizer"]
    summarizing = [r for r in claude.requests if "review summarizer" in json.dumps(r["system"])]
    reviewing = [r for r in claude.requests if r not in summarizing]
    assert summarizing and reviewing
    for request in reviewing:
        session, call = overlays(request)
        assert session.startswith(SESSION) and call.startswith(FOCUS)  # call last: it wins
    assert all(overlays(r) == [] for r in summarizing)
    assert not any(in_messages(r) for r in claude.requests)
