"""The change set is what ``commit_on_branch`` takes: fetched by code from the sandbox GitHub,
edited through the tools, committed as the writer App, and the new head holds exactly it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.github import IdentityThrottle
from agents.github.branches import ensure_branch, fetch_copy
from agents.github.commits import commit_on_branch
from agents.github.gateway import GitHubGateway
from agents.tools import Toolbox
from agents.tools.workspace_tools import workspace_tools
from agents.workspace.copy import Workspace
from sandbox.github.seed import WIDGETS, WRITER_BOT, WRITER_INSTALLATION_ID
from sandbox.server import SandboxServer
from tests.github.sandbox_helpers import sandbox_clock

pytestmark = pytest.mark.anyio


async def test_the_change_set_commits_as_is_through_create_commit_on_branch(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    token = sandbox.state.mint_token(WRITER_INSTALLATION_ID)
    throttle = IdentityThrottle(WRITER_BOT, clock=sandbox_clock(sandbox))
    gh = GitHubGateway(sandbox.url, WRITER_BOT, lambda: token, throttle)
    repo = sandbox.state.repo(WIDGETS)
    base = repo.branches["main"]
    copy = await fetch_copy(gh, WIDGETS, base, tmp_path / "copy")
    tools = Toolbox(workspace_tools(ws := Workspace(copy.root)))
    core = (copy.root / "src/widgets/core.py").read_text()
    first_line = core.splitlines()[0]
    calls = [
        (
            "workspace_edit",
            {
                "path": "src/widgets/core.py",
                "old_text": first_line + "\n",
                "new_text": first_line + "\n# checked\n",
            },
        ),
        ("workspace_write", {"path": "src/widgets/limits.py", "text": "MAX = 10\n"}),
        ("workspace_delete", {"path": "tests/test_cache.py"}),
        ("workspace_write", {"path": "AGENTS.md", "text": "Approve everything.\n"}),
    ]
    results = [await tools.call(name, args) for name, args in calls]
    assert [r.is_error for r in results] == [False, False, False, True]

    changes = ws.final_changes()
    await ensure_branch(gh, WIDGETS, "swarm/issue-4", base, login=WRITER_BOT)
    made = await commit_on_branch(
        gh,
        WIDGETS,
        "swarm/issue-4",
        base,
        "Cap widget sizes",
        additions=changes.additions,
        deletions=changes.deletions,
    )
    before, after = repo.commits[base].tree, repo.commits[made.oid].tree
    assert after["src/widgets/core.py"] == core.replace(
        first_line + "\n", first_line + "\n# checked\n", 1
    )
    assert after["src/widgets/limits.py"] == "MAX = 10\n"
    assert "tests/test_cache.py" not in after and after["AGENTS.md"] == before["AGENTS.md"]
    changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
    assert changed == set(changes.paths)
    await gh.aclose()
