"""A fetched-looking copy on disk, its workspace, and the toolbox a writer would be given."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.tools import Toolbox
from agents.tools.workspace_tools import workspace_tools
from agents.workspace.copy import Workspace
from tests.tools.conftest import make_swarm, swarm, tool_context

__all__ = ["make_swarm", "swarm", "tool_context"]

FILES = {
    "README.md": "# widgets\n",
    "AGENTS.md": "Be careful.\n",
    "uv.lock": "version = 1\n",
    "package.json": "{}\n",
    "sub/dir/CLAUDE.md": "Guidance.\n",
    ".github/workflows/ci.yml": "on: push\n",
    "src/widgets/size.py": "def size(w: int) -> int:\n    return w\n",
}


@pytest.fixture
def copy_root(tmp_path: Path) -> Path:
    root = tmp_path / "copy"
    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


@pytest.fixture
def ws(copy_root: Path) -> Workspace:
    return Workspace(copy_root)


@pytest.fixture
def tools(ws: Workspace) -> Toolbox:
    return Toolbox(workspace_tools(ws))
