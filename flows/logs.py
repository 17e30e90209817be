"""Send the project's own loggers to Prefect run logs, through the redacting filter.

Prefect only ships records from its own loggers (and ``PREFECT_LOGGING_EXTRA_LOGGERS``, read
once when Prefect configures logging). Entry points may import Prefect before they know what
to add, so the flow attaches Prefect's API handler to our loggers itself, and puts the redacting
filter on every handler that may see those records: a logger's filter alone misses records that
propagate from child loggers such as ``agents.worker``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from agents.redact import install_log_redaction

PROJECT_LOGGERS = ("agents", "flows", "swarm")
# Prefect's own loggers carry task failure messages and tracebacks: redact those too.
PREFECT_LOGGERS = ("prefect", "prefect.flow_runs", "prefect.task_runs")


@contextmanager
def project_logs_in_run(level: int = logging.INFO) -> Iterator[None]:
    """While a flow runs, ``agents.*``, ``flows.*`` and ``swarm.*`` records go to its run logs.

    The handlers added here are removed again afterwards, so code running outside a flow run in
    the same process (tests, the CLI) does not try to ship logs without a run to attach them to.
    """
    from prefect.logging.handlers import APILogHandler

    install_log_redaction((*PROJECT_LOGGERS, *PREFECT_LOGGERS, ""))
    added: list[tuple[logging.Logger, logging.Handler, int]] = []
    for name in PROJECT_LOGGERS:
        logger = logging.getLogger(name)
        if any(isinstance(h, APILogHandler) for h in logger.handlers):
            continue  # PREFECT_LOGGING_EXTRA_LOGGERS already did it
        handler: logging.Handler = APILogHandler()
        logger.addHandler(handler)
        added.append((logger, handler, logger.level))
        if logger.level == logging.NOTSET or logger.level > level:
            logger.setLevel(level)
    install_log_redaction(PROJECT_LOGGERS)
    try:
        yield
    finally:
        for logger, handler, previous in added:
            logger.removeHandler(handler)
            logger.setLevel(previous)
