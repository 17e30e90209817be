"""The sandbox lists a pull request's files and validates reviews the way GitHub does: no patch
for binary files or diffs past the per-file limits, renames with ``previous_filename``, at most
3,000 files, rows past a response's diff limit withheld, and 422 for an inline comment off the
diff or a body over 65,536 characters."""

from __future__ import annotations

from typing import Any

import pytest
from githubkit.exception import RequestFailed
from githubkit_schemas.latest.models import DiffEntry

from sandbox.github.diffs import FILE_PATCH_BYTES
from sandbox.github.routes_pulls import MAX_BODY_CHARS, MAX_LISTED_FILES
from sandbox.github.state import SandboxState
from sandbox.server import SandboxServer
from tests.sandbox.clients import items, mint, token_client

REPO = "acme/conventions"
MODULE = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(40))


@pytest.fixture
def served() -> Any:
    state = SandboxState()
    state.add_repo(
        REPO,
        {
            "pkg/old_name.py": MODULE,
            "pkg/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00binary",
            "pkg/data.json": "[]\n",
            "pkg/mod.py": MODULE,
        },
    )
    with SandboxServer(state) as server:
        yield server


def _files(server: SandboxServer, number: int, per_page: int = 100) -> list[DiffEntry]:
    gh = token_client(server.url, mint(server.url, server.state))
    owner, name = REPO.split("/")
    listed: Any = gh.rest.paginate(
        gh.rest.pulls.list_files, owner=owner, repo=name, pull_number=number, per_page=per_page
    )
    return items(list(listed), DiffEntry)


def test_binary_large_and_renamed_files_are_listed_as_github_lists_them(
    served: SandboxServer,
) -> None:
    huge = "".join(f'    "{i:06d}": "{"x" * 40}",\n' for i in range(FILE_PATCH_BYTES // 40))
    pull = served.state.add_pull(
        REPO,
        "Release",
        {
            "pkg/old_name.py": None,
            "pkg/new_name.py": MODULE.replace("x + 3\n", "x + 33\n"),
            "pkg/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00other",
            "pkg/data.json": "{\n" + huge + "}\n",
            "pkg/mod.py": None,
            "pkg/sub/mod.py": MODULE,
        },
    )
    files = {f.filename: f for f in _files(served, pull.number)}
    assert set(files) == {"pkg/new_name.py", "pkg/logo.png", "pkg/data.json", "pkg/sub/mod.py"}
    renamed = files["pkg/new_name.py"]
    assert (renamed.status, renamed.previous_filename) == ("renamed", "pkg/old_name.py")
    assert (renamed.additions, renamed.deletions) == (1, 1) and renamed.patch
    moved = files["pkg/sub/mod.py"]
    assert (moved.status, moved.previous_filename) == ("renamed", "pkg/mod.py")
    assert not isinstance(moved.patch, str)  # the key is left out, as GitHub does
    logo = files["pkg/logo.png"]
    assert (logo.status, logo.additions, logo.deletions) == ("modified", 0, 0)
    assert not isinstance(logo.patch, str)
    data = files["pkg/data.json"]
    assert not isinstance(data.patch, str) and data.additions > 10_000 and data.deletions == 1


def test_a_response_withholds_patches_past_its_line_limit(served: SandboxServer) -> None:
    served.state.knobs.listing_patch_lines = 100
    changes: dict[str, str | bytes | None] = {f"pkg/m{i}.py": MODULE for i in range(3)}
    pull = served.state.add_pull(REPO, "Three modules", changes)
    files = _files(served, pull.number)
    assert [isinstance(f.patch, str) for f in files] == [True, False, False]
    assert [f.additions for f in files][1:] == [0, 0]
    # A smaller page shows them in full again.
    assert all(isinstance(f.patch, str) for f in _files(served, pull.number, per_page=1))


def test_at_most_3000_files_are_listed_over_paged_answers(served: SandboxServer) -> None:
    changes: dict[str, str | bytes | None] = {
        f"gen/f{i:04d}.txt": f"{i}\n" for i in range(MAX_LISTED_FILES + 5)
    }
    pull = served.state.add_pull(REPO, "Many files", changes)
    assert len(_files(served, pull.number)) == MAX_LISTED_FILES
    gh = token_client(served.url, mint(served.url, served.state))
    detail = gh.rest.pulls.get("acme", "conventions", pull.number).parsed_data
    assert detail.changed_files == MAX_LISTED_FILES + 5


def _review(server: SandboxServer, number: int, **body: Any) -> Any:
    gh = token_client(server.url, mint(server.url, server.state))
    return gh.request("POST", f"/repos/{REPO}/pulls/{number}/reviews", json=body)


def test_a_review_off_the_diff_or_over_the_length_limit_is_refused(
    served: SandboxServer,
) -> None:
    pull = served.state.add_pull(
        REPO,
        "Edit",
        {"pkg/mod.py": MODULE.replace("x + 3\n", "x + 33\n"), "pkg/logo.png": b"\x00new"},
    )
    refused: list[dict[str, Any]] = [
        {"body": "x" * (MAX_BODY_CHARS + 1), "event": "COMMENT"},
        {
            "body": "ok",
            "event": "COMMENT",
            "comments": [{"path": "pkg/mod.py", "line": 150, "body": "far from the diff"}],
        },
        {
            "body": "ok",
            "event": "COMMENT",
            "comments": [{"path": "pkg/logo.png", "line": 1, "body": "a binary file"}],
        },
        {
            "body": "ok",
            "event": "COMMENT",
            "comments": [{"path": "pkg/mod.py", "line": 14, "body": "y" * (MAX_BODY_CHARS + 1)}],
        },
    ]
    for body in refused:
        with pytest.raises(RequestFailed) as caught:
            _review(served, pull.number, **body)
        assert caught.value.response.status_code == 422
    posted = _review(
        served,
        pull.number,
        body="x" * MAX_BODY_CHARS,
        event="COMMENT",
        comments=[{"path": "pkg/mod.py", "line": 14, "body": "on the changed line"}],
    )
    assert posted.status_code == 200
