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
QUIET_ENV = {
    # A process that runs flows and also logs outside them (the webhook receiver) has the API
    # handler on loggers that log between runs too: Prefect warned "attempted to send logs to
    # the API without a flow run id" for each such line, a warning nobody can act on. Records
    # outside a run are not run logs; they still reach the console.
    "PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW": "ignore",
}
CLOSED_ENV = {
    # Prefect's runner (what `swarm serve` runs) starts a web server with no credential on
    # localhost:8080 when this is set (run counts, a shutdown endpoint): any local user could
    # stop the swarm's schedule. No swarm process opens it, whatever the shell says.
    "PREFECT_RUNNER_SERVER_ENABLE": "false",
}
# The swarm's own story on the console: which PRs, how each worker ended. Prefect's lines (and
# the workers' detailed ones) go to the server's run logs, and to the console with --verbose.
STORY_LOGGERS = ("flows.run.flow", "flows.run.fanout", "flows.run.children", "flows.events")
# "Task run failed with state: Blocked(..., result=WorkerOutcome(...))" is ~900 characters of a
# worker's end the swarm's own line already told in one sentence.
PREFECT_ENDINGS = ("Finished in state ", "Crash detected! ", "Task run failed with state: ")
# The flow engine's line for the exception that ended a run: the swarm's own error line says the
# same in one sentence (and ``swarm --verbose`` shows both), so the person reads it once.
FLOW_ENGINE_LOGGER = "prefect.flow_runs"
FLOW_EXCEPTION = "Encountered exception during execution"


def prepare_prefect_env() -> None:
    """Offline hygiene.

    Our loggers reach the run logs through :func:`flows.run.logs.project_logs_in_run`, entered by
    the flow itself: ``PREFECT_LOGGING_EXTRA_LOGGERS`` alone ships nothing below WARNING.
    """
    for key, value in {**OFFLINE_ENV, **QUIET_ENV}.items():
        os.environ.setdefault(key, value)
    os.environ.update(CLOSED_ENV)


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


class _StoryOnly(logging.Filter):
    """Lets warnings and errors through, and of the INFO lines only the swarm's story. Prefect's
    lines on how a run ended ("Finished in state Failed(...)", "Crash detected!", the flow
    engine's "Encountered exception during execution") are left to the swarm's own end: its
    headline or its error line, or after Ctrl-C what was done and what was left."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("prefect") and record.getMessage().startswith(PREFECT_ENDINGS):
            return False
        if record.name == FLOW_ENGINE_LOGGER and record.getMessage().startswith(FLOW_EXCEPTION):
            return False
        if record.levelno >= logging.WARNING:
            return True
        return record.levelno >= logging.INFO and record.name in STORY_LOGGERS


class _StoryPlain(logging.Formatter):
    """The story's lines as plain sentences; everything else as the inner formatter has it."""

    def __init__(self, inner: logging.Formatter) -> None:
        super().__init__()
        self.inner = inner

    def format(self, record: logging.LogRecord) -> str:
        if record.levelno == logging.INFO and record.name in STORY_LOGGERS:
            return record.getMessage()
        return self.inner.format(record)


def _console_handlers() -> list[logging.Handler]:
    """The handlers Prefect's logging set up for the terminal (on the root and its loggers)."""
    names = ["", *(n for n in logging.Logger.manager.loggerDict if n.startswith("prefect"))]
    found = []
    for name in names:
        for handler in logging.getLogger(name).handlers:
            plain_stream = type(handler) is logging.StreamHandler
            if plain_stream or type(handler).__name__ == "PrefectConsoleHandler":
                found.append(handler)
    return found


def hide_console_tracebacks() -> None:
    """Call after Prefect is imported (it sets its logging up then): Prefect's terminal
    handlers print one line per error instead of a traceback (``swarm --debug`` skips this)."""
    for handler in _console_handlers():
        if not isinstance(handler.formatter, _WithoutTraceback):
            handler.setFormatter(_WithoutTraceback(handler.formatter or logging.Formatter()))


def quiet_console() -> None:
    """Call after Prefect is imported: the terminal shows the swarm's story and every warning,
    not Prefect's INFO lines (``swarm --verbose`` skips this). Only the terminal handlers are
    filtered: the run logs on the server keep every line."""
    for handler in _console_handlers():
        if not any(isinstance(f, _StoryOnly) for f in handler.filters):
            handler.addFilter(_StoryOnly())
            handler.setFormatter(_StoryPlain(handler.formatter or logging.Formatter()))
