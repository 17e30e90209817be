"""Role overlays on the real path: a session overlay from the run reaches every call of its
workers, a call overlay from configuration exactly the calls right after the worker touched a
matching path; both as system blocks after the cached prefix, never as messages."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from sandbox.github.seed import WIDGETS, WIDGETS_PR_DEBUG_PRINT
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio

SESSION = '<role id="security-reviewer" scope="session">'
CALL = '<role id="security-reviewer" scope="call">'


def overlays(request: dict[str, Any]) -> list[str]:
    """System blocks after the cached prefix (which ends at the block with cache_control)."""
    blocks = request["system"]
    last = max(i for i, b in enumerate(blocks) if "cache_control" in b)
    return [str(b["text"]) for b in blocks[last + 1 :]]


def previous_tools(request: dict[str, Any]) -> set[str]:
    assistant = [m for m in request["messages"] if m["role"] == "assistant"]
    if not assistant:
        return set()
    return {b["name"] for b in assistant[-1]["content"] if b.get("type") == "tool_use"}


async def test_a_session_overlay_is_on_every_call_of_its_worker(swarm: Swarm) -> None:
    task = swarm.pull_task(WIDGETS, WIDGETS_PR_DEBUG_PRINT)
    outcome = await swarm.run(await swarm.dispatch(task, session_role="security-reviewer"))
    assert outcome.status == "succeeded", outcome.reason
    requests = swarm.scripted.requests
    assert requests and all(overlays(r) == [overlays(requests[0])[0]] for r in requests)
    assert overlays(requests[0])[0].startswith(SESSION)
    for request in requests:
        assert "security-reviewer" not in json.dumps(request["messages"])
    chains = {tuple(c.role_chain) for c in swarm.runtime.store.list_llm_calls(outcome.worker_id)}
    assert chains == {("security-reviewer", "reviewer")}


async def test_a_call_overlay_from_configuration_scopes_exactly_the_calls_after_its_paths(
    make_swarm: Callable[..., Swarm], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWARM_PATH_OVERLAYS", json.dumps({"src/widgets/*": "security-reviewer"}))
    async with make_swarm() as swarm:
        outcome = await swarm.review(WIDGETS, WIDGETS_PR_DEBUG_PRINT)
    assert outcome.status == "succeeded", outcome.reason
    requests = swarm.scripted.requests
    scoped = [bool(overlays(r)) for r in requests]
    assert scoped == ["list_pull_files" in previous_tools(r) for r in requests]
    assert any(scoped) and not all(scoped)
    for request, on in zip(requests, scoped, strict=True):
        assert overlays(request) == ([overlays(request)[0]] if on else [])
        if on:
            assert overlays(request)[0].startswith(CALL)
        assert "security-reviewer" not in json.dumps(request["messages"])
    calls = swarm.runtime.store.list_llm_calls(outcome.worker_id)
    assert [c.role_chain for c in calls] == [
        ["security-reviewer", "reviewer"] if on else ["reviewer"] for on in scoped
    ]
    # the cached prefix is the same on every call, overlay or not
    assert (
        len({json.dumps(r["system"][: len(r["system"]) - len(overlays(r))]) for r in requests}) == 1
    )


async def test_an_overlay_naming_no_role_is_refused_before_anything_opens(
    make_swarm: Callable[..., Swarm], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agents.settings.model import ConfigError

    monkeypatch.setenv("SWARM_PATH_OVERLAYS", json.dumps({"docs/**": "docs-writer"}))
    with pytest.raises(ConfigError, match="SWARM_PATH_OVERLAYS: 'docs/\\*\\*' names no role"):
        make_swarm()
