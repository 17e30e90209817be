"""Running this interpreter in a process of its own, the way a person runs ``python -m ...``."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def run_python(
    *args: str, env: Mapping[str, str], cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` in ``cwd`` with exactly ``env``; output captured as text, the exit status
    left to the caller to assert."""
    return subprocess.run(
        [sys.executable, *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
