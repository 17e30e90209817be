"""Environment for Prefect, set before Prefect is first imported (it reads settings at import)."""

from __future__ import annotations

import os
from pathlib import Path

OFFLINE_ENV = {
    # The only outbound calls Prefect makes; the swarm runs offline unless told otherwise.
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
}


def prepare_prefect_env(home: Path | None = None) -> None:
    """Offline hygiene, and optionally a Prefect home of our own.

    Our loggers reach the run logs through :func:`flows.logs.project_logs_in_run`, entered by
    the flow itself: ``PREFECT_LOGGING_EXTRA_LOGGERS`` alone ships nothing below WARNING.

    ``home`` is only set by the demo: there the Prefect database belongs to the swarm's data
    directory. For ``swarm run`` the user's Prefect profile (Cloud, a server, or a temporary
    local server) decides, so their profile location is left alone.
    """
    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)
    # A temporary local server can take far longer than Prefect's 20 s to start on a busy host.
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
    if home is not None:
        home.mkdir(parents=True, exist_ok=True)
        os.environ["PREFECT_HOME"] = str(home.resolve())
        # A demo never talks to a remote API, whatever the user's shell says.
        os.environ.pop("PREFECT_API_URL", None)
        os.environ.pop("PREFECT_API_KEY", None)
