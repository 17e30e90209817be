"""Pull requests too large for one small context window, for the context tests and bench.

``add_wide_pull``: one PR that adds ``files`` small modules (every 7th with a leftover print).
``add_long_file_pull``: a ``lines``-line module already on the base branch, and one PR that
changes two lines of it (one a print), so a reviewer reading the whole file must page it.
"""

from __future__ import annotations

from sandbox.github.model import Issue
from sandbox.github.state import SandboxState


def add_wide_pull(state: SandboxState, repo: str, files: int = 300) -> Issue:
    package = repo.split("/", 1)[1]
    changes: dict[str, str | None] = {}
    for k in range(files):
        body = f'"""Module {k} of a wide change."""\n\n\ndef value_{k}(x: int) -> int:\n'
        if k % 7 == 3:
            body += f'    print("value_{k}", x)\n'
        body += f"    return x + {k}\n"
        changes[f"src/{package}/wide/mod_{k:03d}.py"] = body
    return state.add_pull(
        repo, f"Add {files} modules", changes, body="A wide change.", author="dave-dev"
    )


def long_module(lines: int) -> str:
    return "".join(f"VALUE_{i:05d} = {i} * 3  # entry {i}\n" for i in range(lines))


def add_long_file_pull(state: SandboxState, repo: str, lines: int = 5000) -> Issue:
    package = repo.split("/", 1)[1]
    path = f"src/{package}/table.py"
    base = state.repo(repo)
    base_commit = base.commits[base.branches[base.default_branch]]
    if path not in base_commit.tree:
        # The long file lands on the base branch first, so the PR's patch stays small.
        first = state.add_pull(repo, "Add the table", {path: long_module(lines)}, author="dave-dev")
        assert first.pull is not None
        base.branches[base.default_branch] = first.pull.head_sha
        first.state = "closed"
    text = long_module(lines).splitlines(keepends=True)
    middle = lines // 2
    text[middle] = f"VALUE_{middle:05d} = {middle} * 4  # entry {middle}, changed\n"
    text.insert(middle + 1, 'print("table loaded")\n')
    return state.add_pull(
        repo, "Change one table entry", {path: "".join(text)}, body="Small fix.", author="dave-dev"
    )
