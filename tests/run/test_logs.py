"""Which of our log records a flow run ships to Prefect, and that nothing stays behind after it.

The bug these guard against: Prefect gives the loggers named in PREFECT_LOGGING_EXTRA_LOGGERS
its API handler but no level, so they inherit the root's WARNING and every INFO line of ours was
dropped against a real server. The real-server tests in ``real_server/`` show the end result;
these pin the mechanism without starting a server.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from prefect.logging.handlers import APILogHandler

from flows.run.logs import PROJECT_LOGGERS, level_number, project_logs_in_run


def _api_handlers(name: str) -> list[logging.Handler]:
    return [h for h in logging.getLogger(name).handlers if isinstance(h, APILogHandler)]


@pytest.fixture
def pristine_loggers() -> Iterator[None]:
    saved = {
        n: (logging.getLogger(n).level, list(logging.getLogger(n).handlers))
        for n in PROJECT_LOGGERS
    }
    yield
    for name, (level, handlers) in saved.items():
        logger = logging.getLogger(name)
        logger.setLevel(level)
        logger.handlers[:] = handlers


@pytest.mark.usefixtures("pristine_loggers")
def test_info_lines_ship_during_a_run_and_nothing_stays_afterwards() -> None:
    with project_logs_in_run():
        for name in PROJECT_LOGGERS:
            assert logging.getLogger(f"{name}.child").isEnabledFor(logging.INFO)
            assert len(_api_handlers(name)) == 1
    for name in PROJECT_LOGGERS:
        assert _api_handlers(name) == []
        assert logging.getLogger(name).level == logging.NOTSET


@pytest.mark.usefixtures("pristine_loggers")
def test_loggers_prefect_already_handed_its_api_handler_still_get_the_level() -> None:
    # What PREFECT_LOGGING_EXTRA_LOGGERS leaves behind: a handler, and the root's WARNING.
    extra = APILogHandler()
    logging.getLogger("agents").addHandler(extra)
    assert not logging.getLogger("agents.worker").isEnabledFor(logging.INFO)
    with project_logs_in_run():
        assert logging.getLogger("agents.worker").isEnabledFor(logging.INFO)
        assert _api_handlers("agents") == [extra]
    assert _api_handlers("agents") == [extra]


@pytest.mark.usefixtures("pristine_loggers")
def test_the_configured_level_decides_what_ships() -> None:
    with project_logs_in_run("WARNING"):
        assert not logging.getLogger("agents.worker").isEnabledFor(logging.INFO)
        assert logging.getLogger("agents.worker").isEnabledFor(logging.WARNING)
    with project_logs_in_run("DEBUG"):
        assert logging.getLogger("flows.run.fanout").isEnabledFor(logging.DEBUG)


def test_level_names_are_read_in_any_case_and_unknown_ones_refused() -> None:
    assert level_number("info") == logging.INFO
    assert level_number(" Warning ") == logging.WARNING
    assert level_number(logging.ERROR) == logging.ERROR
    with pytest.raises(ValueError, match="unknown log level 'chatty'"):
        level_number("chatty")
