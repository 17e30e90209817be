"""What ``swarm server start|stop|status`` do and print."""

from __future__ import annotations

from pathlib import Path

from agents.private_files import private_folder
from flows.local.prefect_server import LocalServer, password_hint, prefect_home

EXIT_UP = 0
EXIT_DOWN = 1


def _data_dir() -> Path:
    from agents.settings.model import load_settings

    return load_settings().data_dir


def _home() -> Path:
    return prefect_home(_data_dir())


def _describe(server: LocalServer) -> str:
    return f"{server.url} (pid {server.pid}, home {server.home})"


def _configured_note() -> str | None:
    from flows.local.env import configured_api_url

    chosen = configured_api_url()
    if chosen is None:
        return None
    from agents.redact import redact

    return (
        f"runs use the Prefect API you configured, {redact(chosen)} (PREFECT_API_URL or your "
        "Prefect profile), not a local server"
    )


def start() -> None:
    from flows.cli.console import say
    from flows.local.prefect_server import ensure_running

    note = _configured_note()
    if note:
        say(note)
    data_dir = _data_dir()
    private_folder(data_dir, "the data directory (SWARM_DATA_DIR)")
    home = prefect_home(data_dir)
    say("starting the local Prefect server (the first start takes a while)...")
    server, started = ensure_running(home)
    from flows.local.warm_client import start as start_warm_server

    start_warm_server(home, server.pid)
    verb = "started" if started else "already running"
    say(f"local Prefect server {verb}: {_describe(server)}")
    say(f"UI: {server.url}/runs   stop it with: swarm server stop")
    say(password_hint(home))


def stop() -> None:
    from flows.cli.console import say
    from flows.local.prefect_server import stop as stop_server

    stopped = stop_server(_home())
    if stopped is None:
        say("no local Prefect server was running")
    else:
        say(f"stopped the local Prefect server {_describe(stopped)}")


def status() -> int:
    from flows.cli.console import say
    from flows.local.prefect_server import status as server_status

    note = _configured_note()
    if note:
        say(note)
        return EXIT_UP
    home = _home()
    server = server_status(home)
    if server is None:
        say(
            f"no local Prefect server running for {home}; the next `swarm run` or "
            "`swarm server start` starts one"
        )
        return EXIT_DOWN
    say(f"local Prefect server running: {_describe(server)}")
    say(f"UI: {server.url}/runs")
    say(password_hint(home))
    from flows.local.warm_client import running_pid

    warm = running_pid(home)
    say(f"warm starter: {f'running (pid {warm})' if warm else 'not running'}")
    return EXIT_UP
