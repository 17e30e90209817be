"""The sandbox the tests of confined runs need: a working ``bwrap``.

Without one they skip, unless ``SWARM_TEST_REQUIRE_BWRAP=1`` (CI, which installs Debian's
bubblewrap) makes that a failure: the attack tests must run, not skip.
"""

from __future__ import annotations

import os

import pytest

from agents.confine import SandboxUnavailable
from agents.confine.probe import require_sandbox

REQUIRED = os.environ.get("SWARM_TEST_REQUIRE_BWRAP") == "1"


def require_bwrap() -> None:
    """Skip (or fail, when CI requires it) unless a working sandbox is here."""
    try:
        require_sandbox()
    except SandboxUnavailable as exc:
        if REQUIRED:
            pytest.fail(f"SWARM_TEST_REQUIRE_BWRAP=1: {exc}")
        pytest.skip(str(exc))
