"""Headless Chromium for UI tests, wherever they live (a plugin of the root conftest)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser import Browser, chromium_path


@pytest.fixture(scope="session")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """Headless Chromium, one process for the session; skipped where it is not installed,
    unless CI requires it. Tests take ``browser``."""
    if chromium_path() is None:
        if os.environ.get("SWARM_TEST_REQUIRE_BROWSER") == "1":
            pytest.fail("chromium required but not installed (apt-get install -y chromium)")
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    with Browser(tmp_path_factory.mktemp("chromium-profile")) as found:
        yield found


@pytest.fixture
def browser(chromium: Browser) -> Iterator[Browser]:
    """The session's Chromium, its tabs closed when the test ends: a Prefect UI page left open
    polls and renders for the rest of the session (Chromium's GPU process stayed near half a
    core on CI's two)."""
    try:
        yield chromium
    finally:
        chromium.close_tabs()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the UI tests save what they saw; ``SWARM_SCREENSHOTS_DIR=docs/img`` refreshes the
    pictures in docs/operations.md."""
    configured = os.environ.get("SWARM_SCREENSHOTS_DIR")
    # Resolved now: a test may change the working directory (the CLI tests run in a tmp one).
    return Path(configured).resolve() if configured else tmp_path_factory.mktemp("screenshots")
