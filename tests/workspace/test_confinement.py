"""Every path the model names stays inside the copy: no traversal, no link, no special file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agents.tools import Toolbox
from agents.workspace.copy import MAX_READ_BYTES, PathRefused, Workspace

pytestmark = pytest.mark.anyio


# An absolute path names a file of the test's own, never a system file: were the guard ever
# broken, the write tool would write there (a run as root once emptied /etc/passwd this way).
ABSOLUTE = "<the outside file, absolute>"


@pytest.mark.parametrize(
    "path", ["../outside.txt", ABSOLUTE, "src/../../outside.txt", "%2e%2e/outside.txt", "a\\b"]
)
async def test_traversal_and_absolute_paths_are_refused_for_every_tool(
    tools: Toolbox, copy_root: Path, path: str
) -> None:
    (copy_root.parent / "outside.txt").write_text("outside secret\n")
    if path == ABSOLUTE:
        path = str(copy_root.parent / "outside.txt")
    for name, args in [
        ("workspace_read", {"path": path}),
        ("workspace_write", {"path": path, "text": "x"}),
        ("workspace_delete", {"path": path}),
        ("workspace_list", {"path": path}),
        ("workspace_search", {"query": "secret", "under": path}),
    ]:
        result = await tools.call(name, args)
        assert result.is_error, (name, path)
        assert "outside secret" not in result.content
    assert (copy_root.parent / "outside.txt").read_text() == "outside secret\n"


async def test_a_symlink_planted_in_the_repository_is_never_followed(
    copy_root: Path, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "store.db").write_text("sealing key: s3cr3t\n")
    # A stand-in for /etc: a broken guard writes through the link, and must not write the host's.
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "passwd").write_text("root:x:0:0:root:/root:/bin/sh\n")
    (copy_root / "etc").symlink_to(etc)
    (copy_root / "data").symlink_to(data_dir)
    (copy_root / "store.db").symlink_to(data_dir / "store.db")
    (copy_root / "inner").symlink_to(copy_root / "README.md")  # even a link inside the copy
    ws = Workspace(copy_root)
    for path in ["etc/passwd", "data/store.db", "store.db", "inner"]:
        with pytest.raises(PathRefused, match="symbolic link"):
            ws.read(path)
        with pytest.raises(PathRefused, match="symbolic link"):
            ws.write(path, "overwritten\n")
    with pytest.raises(PathRefused, match="symbolic link"):
        ws.write("data/new.txt", "planted\n")
    hits, _ = ws.search("s3cr3t")
    assert hits == [] and (data_dir / "store.db").read_text() == "sealing key: s3cr3t\n"
    assert (etc / "passwd").read_text() == "root:x:0:0:root:/root:/bin/sh\n"
    assert not (data_dir / "new.txt").exists()
    listed = {e.name: e.kind for e in ws.listing()[0]}
    assert listed["data"] == "link" and listed["store.db"] == "link"


async def test_a_fifo_is_refused_instead_of_blocking_the_read(copy_root: Path) -> None:
    os.mkfifo(copy_root / "pipe")
    ws = Workspace(copy_root)
    with pytest.raises(PathRefused, match="not a regular file"):
        ws.read("pipe")
    assert ws.search("anything")[0] == []


async def test_a_file_over_the_read_cap_or_not_text_is_refused(copy_root: Path) -> None:
    (copy_root / "big.txt").write_bytes(b"x" * (MAX_READ_BYTES + 1))
    (copy_root / "blob.bin").write_bytes(b"\xff\xfe\x00")
    ws = Workspace(copy_root)
    with pytest.raises(PathRefused, match="cap"):
        ws.read("big.txt")
    with pytest.raises(PathRefused, match="not UTF-8"):
        ws.read("blob.bin")


async def test_a_hard_link_to_a_file_outside_the_copy_is_neither_read_nor_emptied(
    copy_root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "sealing.key"
    outside.write_text("sealing key: s3cr3t\n")
    os.link(outside, copy_root / "key.txt")
    ws = Workspace(copy_root)
    with pytest.raises(PathRefused, match="hard link"):
        ws.read("key.txt")
    with pytest.raises(PathRefused, match="not a regular file of the copy alone"):
        ws.write("key.txt", "overwritten\n")
    assert outside.read_text() == "sealing key: s3cr3t\n" and ws.search("s3cr3t")[0] == []


async def test_deleting_a_file_over_the_read_cap_is_in_the_change_set(copy_root: Path) -> None:
    (copy_root / "data.csv").write_bytes(b"x" * (MAX_READ_BYTES + 1))
    ws = Workspace(copy_root)
    ws.delete("data.csv")
    assert ws.final_changes().deletions == ("data.csv",)
