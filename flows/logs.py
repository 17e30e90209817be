"""Send the project's own loggers to Prefect run logs, through the redacting filter.

Prefect only ships records from its own loggers (and ``PREFECT_LOGGING_EXTRA_LOGGERS``, read
once when Prefect configures logging). Entry points may import Prefect before they know what
to add, so the flow attaches Prefect's API handler to our loggers itself, and puts the redacting
filter on every handler that may see those records: a logger's filter alone misses records that
propagate from child loggers such as ``agents.worker``.
"""

from __future__ import annotations

import logging

from agents.redact import install_log_redaction

PROJECT_LOGGERS = ("agents", "flows", "swarm")
# Prefect's own loggers carry task failure messages and tracebacks: redact those too.
PREFECT_LOGGERS = ("prefect", "prefect.flow_runs", "prefect.task_runs")


def bridge_project_logs(level: int = logging.INFO) -> None:
    """Make ``agents.*``, ``flows.*`` and ``swarm.*`` records appear in the Prefect run logs."""
    from prefect.logging.handlers import APILogHandler

    for name in PROJECT_LOGGERS:
        logger = logging.getLogger(name)
        if logger.level == logging.NOTSET or logger.level > level:
            logger.setLevel(level)
        if not any(isinstance(h, APILogHandler) for h in logger.handlers):
            logger.addHandler(APILogHandler())
    install_log_redaction((*PROJECT_LOGGERS, *PREFECT_LOGGERS, ""))
