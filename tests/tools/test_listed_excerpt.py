"""A listed file (generated, vendored, data, no patch from GitHub...) is read only as one bounded
excerpt, never page by page: a 900 KB data file committed by mistake costs one short tool
result, not forty-seven pages of the token budget."""

from __future__ import annotations

import pytest

from agents.tools import build_toolbox
from agents.tools.pages import EXCERPT_CHARS
from agents.work import ListedFile
from sandbox.github.seed import WIDGETS
from tests.tools.conftest import MakeContext
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio

CACHE = "cache/results.json"


async def test_a_listed_file_is_read_as_one_bounded_excerpt(
    swarm: Swarm, tool_context: MakeContext
) -> None:
    data = "".join(f'{{"row": {i}, "value": "{"x" * 80}"}},\n' for i in range(10_000))
    pull = swarm.sandbox.state.add_pull(
        WIDGETS, "Cache", {CACHE: data, "src/widgets/a.py": "A = 1\n"}, author="dave-dev"
    )
    task = swarm.pull_task(WIDGETS, pull.number).model_copy(
        update={
            "files": ("src/widgets/a.py",),
            "listed": (ListedFile(path=CACHE, reason="GitHub shows no patch"),),
        }
    )
    toolbox = build_toolbox(await tool_context(task), ["read_file", "list_pull_files"])
    first = await toolbox.call("read_file", {"path": CACHE})
    assert not first.is_error
    assert len(first.content) < EXCERPT_CHARS + 1_000
    assert f"{CACHE} is listed, not read in full (GitHub shows no patch)" in first.content
    assert "no next page" in first.content
    # Asking for a later page gives the same excerpt: there is nothing more to page through.
    again = await toolbox.call("read_file", {"path": CACHE, "page": 30})
    assert again.content == first.content
    # GitHub shows no patch for a diff this large: asked for one, the tool says where to look.
    patch = await toolbox.call("list_pull_files", {"path": CACHE, "patch_page": 5})
    assert patch.is_error and "read_file gives an excerpt" in patch.content
