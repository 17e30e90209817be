"""``swarm server start|stop|status``: the local Prefect server runs and the UI share."""

from __future__ import annotations

import typer

commands = typer.Typer(
    name="server",
    help=(
        "The local Prefect server (API and UI) that runs use when PREFECT_API_URL is not set. "
        "It starts by itself on first use; start it here to open the UI."
    ),
    no_args_is_help=True,
)


@commands.command("start")
def server_start() -> None:
    """Start the local Prefect server (or find it running) and print the UI's address."""
    from flows.cli.server_actions import start

    start()


@commands.command("stop")
def server_stop() -> None:
    """Stop the local Prefect server; the next run starts it again."""
    from flows.cli.server_actions import stop

    stop()


@commands.command("status")
def server_status() -> None:
    """Say which Prefect server runs use, and whether it is up (exit 1 when it is not)."""
    from flows.cli.server_actions import status

    raise typer.Exit(status())
