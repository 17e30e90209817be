"""Tests that share one expensive server run on one xdist worker (a plugin of the root conftest).

A real ``prefect server start`` or a work pool is set up once per worker that runs a test needing
it, so the tests sharing one run on one worker, in order, and everything else spreads over the
workers (`make test` runs ``--dist loadgroup``). tests/test_xdist_groups.py checks the groups hold.
"""

from __future__ import annotations

import pytest

# First match wins: a file named here goes to its group before its folder's.
XDIST_GROUPS = {
    # The real-server tests' two slowest files (~560 s of the group's ~1,200) share a server of
    # their own: in one group the 34 tests were the suite's longest chain on one worker.
    # Neither reads the session's ``observed`` run, which the rest share.
    "tests/run/real_server/test_receiver_crash.py": "prefect-server-2",
    "tests/run/real_server/test_cli_endings.py": "prefect-server-2",
    "tests/run/real_server/": "prefect-server",
    "tests/run/test_work_pool.py": "work-pool",
    # Its tests share one module fixture: three flow runs whose GraphQL they check.
    "tests/run/test_graphql_schema.py": "graphql-schema",
}


# First: xdist reads the marks in its own hook of the same name, and marks added after it had
# no effect; every group was spread over the workers, each setting up its own servers.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        group = next(
            (g for prefix, g in XDIST_GROUPS.items() if item.nodeid.startswith(prefix)), None
        )
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
