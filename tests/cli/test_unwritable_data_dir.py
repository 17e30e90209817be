"""A data directory swarm may not write is the person's to fix, and says so in one line naming
it: never "this looks like a bug". The read-only folder is a real read-only mount (root, as
the suite runs in CI; skipped where mounting is not allowed)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import EXIT_USAGE

SWARM = str(Path(sys.executable).with_name("swarm"))


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "read-only"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(folder)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a read-only folder here: {mounted.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=False)


@pytest.mark.parametrize("command", [["runs"], ["memory", "add", "Use tabs"]])
def test_a_read_only_data_directory_is_named_not_called_a_bug(
    read_only: Path, tmp_path: Path, command: list[str]
) -> None:
    done = subprocess.run(
        [SWARM, *command],
        env={**os.environ, "SWARM_DATA_DIR": str(read_only)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == EXIT_USAGE, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: swarm cannot write {read_only}: read-only file system; point SWARM_DATA_DIR "
        "at a folder of your own that you can write"
    ]
