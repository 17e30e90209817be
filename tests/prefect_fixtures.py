"""The Prefect test harness, shared by every test that runs a flow (a plugin of the root conftest).

It starts a temporary Prefect server (about 20 s), so one serves the whole session, whichever
folders its flow tests live in.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def prefect_harness() -> Iterator[None]:
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    from prefect.testing.utilities import prefect_test_harness

    from flows.local.env import prepare_prefect_env

    prepare_prefect_env()
    with prefect_test_harness(server_startup_timeout=180):
        yield
