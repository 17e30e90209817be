"""The toolbox: only the role's tools, only the writes its token allows, errors for the model."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agents.roles import KNOWN_TOOLS
from agents.tools import build_toolbox, tool_names
from sandbox.github.seed import WIDGETS, WIDGETS_ISSUE_DOCS, WIDGETS_PR_DEBUG_PRINT
from tests.tools.conftest import MakeContext
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio


def test_every_declared_tool_is_listed_by_a_shipped_role() -> None:
    """A declared tool no shipped role lists is dead weight in the catalog (and a role listing an
    undeclared one is refused at load, tests/roles)."""
    from agents.roles.files import load_roles
    from tests.paths import ROLES_DIR

    listed = {tool for role in load_roles(ROLES_DIR).values() for tool in role.tools}
    assert set(tool_names()) == listed == set(KNOWN_TOOLS)


async def test_tools_are_offered_sorted_and_writes_only_with_their_permission(
    swarm: Swarm, tool_context: MakeContext
) -> None:
    ctx = await tool_context(swarm.pull_task(WIDGETS, WIDGETS_PR_DEBUG_PRINT))
    assert ctx.permissions.get("issues") is None  # the reviewer's token cannot label
    wanted = ["submit_review", "get_pull", "add_labels", "memory_search"]
    offered = [s["name"] for s in build_toolbox(ctx, wanted).schemas()]
    assert offered == ["get_pull", "memory_search", "submit_review"]

    read_only = build_toolbox(replace(ctx, permissions={"pull_requests": "read"}), wanted)
    assert [s["name"] for s in read_only.schemas()] == ["get_pull", "memory_search"]
    with pytest.raises(ValueError, match="unknown tool"):
        build_toolbox(ctx, ["get_pull", "merge_pull"])

    answering = ["get_thread", "reply_in_thread"]
    assert [s["name"] for s in build_toolbox(ctx, answering).schemas()] == answering
    reader = build_toolbox(replace(ctx, permissions={"pull_requests": "read"}), answering)
    assert [s["name"] for s in reader.schemas()] == ["get_thread"]


async def test_bad_arguments_and_unknown_tools_are_error_results_for_the_model(
    swarm: Swarm, tool_context: MakeContext
) -> None:
    ctx = await tool_context(swarm.pull_task(WIDGETS, WIDGETS_PR_DEBUG_PRINT))
    toolbox = build_toolbox(ctx, ["read_file", "get_pull"])
    bad = await toolbox.call("read_file", {"path": ""})
    assert bad.is_error and bad.content.startswith("invalid arguments for read_file: path:")
    missing = await toolbox.call("add_labels", {"labels": ["x"]})
    assert missing.is_error and "'add_labels' is not available" in missing.content


async def test_a_tool_acts_only_on_the_tasks_own_target(
    swarm: Swarm, tool_context: MakeContext
) -> None:
    from agents.work import Task

    task = Task(kind="triage_issue", repo=WIDGETS, number=WIDGETS_ISSUE_DOCS)
    ctx = await tool_context(task, role="triager")
    toolbox = build_toolbox(ctx, ["add_labels", "get_issue"])
    other = await toolbox.call("add_labels", {"labels": ["x"], "number": WIDGETS_ISSUE_DOCS + 1})
    assert other.is_error and "may only act on" in other.content
    elsewhere = await toolbox.call("get_issue", {"repo": "acme/gadgets"})
    assert elsewhere.is_error and "may only act on acme/widgets" in elsewhere.content
    assert swarm.writes() == []
