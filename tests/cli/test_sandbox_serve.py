"""``swarm sandbox serve``: the offline GitHub in the foreground, its folder named by ``--dir``
or by the name that flag had before, ``--keys-dir``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.ports import closed_port

SWARM = str(Path(sys.executable).with_name("swarm"))


@pytest.mark.parametrize("flag", ["--dir", "--keys-dir"])
def test_the_sandbox_writes_its_settings_to_the_folder_named(tmp_path: Path, flag: str) -> None:
    folder = tmp_path / "sandbox"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWARM_")}
    command = [SWARM, "sandbox", "serve", flag, str(folder), "--port", str(closed_port())]
    process = subprocess.Popen(
        command, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 120
        while not (folder / "sandbox.env").is_file():
            assert process.poll() is None, process.stdout.read() if process.stdout else ""
            assert time.monotonic() < deadline, "the sandbox never wrote its settings"
            time.sleep(0.2)
        assert "SWARM_GITHUB_API_URL=" in (folder / "sandbox.env").read_text()
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)
