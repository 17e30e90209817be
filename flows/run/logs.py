"""Send the project's own loggers to Prefect run logs, through the redacting filter.

Prefect ships records from its own loggers, and from ``PREFECT_LOGGING_EXTRA_LOGGERS`` by
giving them its API handler, but it never sets their level: they inherit the root logger's
WARNING, so every INFO line of ours was dropped before any handler saw it. That held against a
real server; the test harness hid it because there Prefect had configured logging before the
extra loggers were named, so this module attached the handler and set the level itself. Here
both happen on every run, whichever way the handler got there: the flow's loggers are set to
the configured level while the run lasts, and get exactly one API handler.

The redacting filter goes on every handler that may see those records: a logger's filter alone
misses records that propagate from child loggers such as ``agents.worker``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from agents.redact import install_log_redaction

PROJECT_LOGGERS = ("agents", "flows", "swarm")
# Prefect's own loggers carry task failure messages and tracebacks: redact those too.
PREFECT_LOGGERS = ("prefect", "prefect.flow_runs", "prefect.task_runs")


def level_number(level: str | int) -> int:
    """``"info"``, ``"INFO"`` or ``20`` as a logging level number; ValueError otherwise."""
    if isinstance(level, int):
        return level
    found = logging.getLevelName(level.strip().upper())
    if not isinstance(found, int):
        raise ValueError(f"unknown log level {level!r} (use DEBUG, INFO, WARNING or ERROR)")
    return found


@contextmanager
def project_logs_in_run(level: str | int = logging.INFO) -> Iterator[None]:
    """While a flow runs, ``agents.*``, ``flows.*`` and ``swarm.*`` records at ``level`` and
    above go to its run logs (a worker's to its task run's logs), redacted.

    Handlers and levels set here are put back afterwards, so code running outside a flow run in
    the same process (tests, the CLI) neither ships logs without a run to attach them to nor
    keeps a level it did not ask for.
    """
    from prefect.logging.handlers import APILogHandler

    wanted = level_number(level)
    install_log_redaction((*PROJECT_LOGGERS, *PREFECT_LOGGERS, ""))
    restore: list[tuple[logging.Logger, logging.Handler | None, int]] = []
    for name in PROJECT_LOGGERS:
        logger = logging.getLogger(name)
        added: logging.Handler | None = None
        if not any(isinstance(h, APILogHandler) for h in logger.handlers):
            added = APILogHandler()
            logger.addHandler(added)
        restore.append((logger, added, logger.level))
        logger.setLevel(wanted)
    install_log_redaction(PROJECT_LOGGERS)
    try:
        yield
    finally:
        for logger, added, previous in restore:
            if added is not None:
                logger.removeHandler(added)
            logger.setLevel(previous)
