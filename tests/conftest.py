"""Suite-wide options and fixtures."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

pytest_plugins = [
    "tests.xdist_groups",
    "tests.sandbox_fixtures",
    "tests.prefect_fixtures",
    "tests.browser_fixtures",
]

PG_URL_DEFAULT = "postgresql+psycopg://postgres@127.0.0.1:5432/test"

# Host credentials must never matter: plant them for the whole suite so any code path that
# reads them would show up in a leak scan or as a wrong identity.
HOST_GH_TOKEN = "ghp_HOSTMAINTAINERTOKENshouldNEVERbeUSED0001"

# Property tests check what holds for every example, not how fast one runs: on a shared machine
# under load an example can take seconds, so no deadline and no "too slow" health check.
settings.register_profile(
    "swarm", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
# CI (.ci/run) replays the same examples on every run, so a landing is judged on the code, not on
# the draw; local runs keep exploring new examples and print a blob to replay what they find.
settings.register_profile("ci", parent=settings.get_profile("swarm"), derandomize=True)
settings.load_profile(os.environ.get("SWARM_TEST_HYPOTHESIS_PROFILE", "swarm"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--live", action="store_true", help="run tests that call the real Anthropic API"
    )


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ["GH_TOKEN"] = HOST_GH_TOKEN
    os.environ["GITHUB_TOKEN"] = HOST_GH_TOKEN
    # The suite's own SWARM_TEST_* variables are not swarm settings: the documented escape hatch.
    os.environ["SWARM_ALLOW_UNKNOWN"] = "SWARM_TEST_*"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--live"):
        return
    skip_live = pytest.mark.skip(reason="needs --live (real Anthropic API)")
    for item in items:
        if "live" in item.keywords:
            item.add_marker(skip_live)


@pytest.fixture(scope="session")
def pg_url() -> str:
    """The PostgreSQL URL for store tests; fails (not skips) in CI when it is unreachable."""
    import sqlalchemy as sa

    url = os.environ.get("SWARM_TEST_PG_URL", PG_URL_DEFAULT)
    try:
        engine = sa.create_engine(url)
        with engine.connect() as conn:
            conn.execute(sa.text("select 1"))
        engine.dispose()
    except Exception as exc:
        if os.environ.get("SWARM_TEST_REQUIRE_PG") == "1":
            pytest.fail(f"PostgreSQL required but unreachable at {url}: {exc}")
        pytest.skip(f"PostgreSQL unreachable at {url}")
    return url
