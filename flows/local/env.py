"""Environment for Prefect, set before Prefect is first imported (it reads settings at import)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

OFFLINE_ENV = {
    # The only outbound calls Prefect makes; the swarm runs offline unless told otherwise.
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
}


def prepare_prefect_env() -> None:
    """Offline hygiene.

    Our loggers reach the run logs through :func:`flows.run.logs.project_logs_in_run`, entered by
    the flow itself: ``PREFECT_LOGGING_EXTRA_LOGGERS`` alone ships nothing below WARNING.
    """
    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)


def configured_api_url() -> str | None:
    """The Prefect API the person chose: ``PREFECT_API_URL``, else their active profile's."""
    if os.environ.get("PREFECT_API_URL"):
        return os.environ["PREFECT_API_URL"]
    import tomllib

    home = Path(os.environ.get("PREFECT_HOME") or Path.home() / ".prefect").expanduser()
    path = Path(os.environ.get("PREFECT_PROFILES_PATH") or home / "profiles.toml").expanduser()
    try:
        profiles = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    active = os.environ.get("PREFECT_PROFILE") or profiles.get("active")
    chosen = profiles.get("profiles", {}).get(active or "", {})
    url = chosen.get("PREFECT_API_URL") if isinstance(chosen, dict) else None
    return str(url) if url else None


class _WithoutTraceback(logging.Formatter):
    """Formats a record as its inner formatter would, minus the traceback and stack: on the
    terminal an error is its one-line message; the run logs in the UI keep the traceback."""

    def __init__(self, inner: logging.Formatter) -> None:
        super().__init__()
        self.inner = inner

    def format(self, record: logging.LogRecord) -> str:
        saved = record.exc_info, record.exc_text, record.stack_info
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        try:
            return self.inner.format(record)
        finally:
            record.exc_info, record.exc_text, record.stack_info = saved


def hide_console_tracebacks() -> None:
    """Call after Prefect is imported (it sets its logging up then): Prefect's terminal
    handlers print one line per error instead of a traceback (``swarm --debug`` skips this)."""
    names = ["", *(n for n in logging.Logger.manager.loggerDict if n.startswith("prefect"))]
    for name in names:
        for handler in logging.getLogger(name).handlers:
            plain_stream = type(handler) is logging.StreamHandler
            if not (plain_stream or type(handler).__name__ == "PrefectConsoleHandler"):
                continue
            if not isinstance(handler.formatter, _WithoutTraceback):
                handler.setFormatter(_WithoutTraceback(handler.formatter or logging.Formatter()))
