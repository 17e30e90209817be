"""``swarm store prune``: upkeep of the shared store."""

from __future__ import annotations

from typing import Annotated

import typer

from flows.cli.options import command_group

commands = command_group("store", "Maintain the shared store (retention).")


@commands.command("prune")
def store_prune(
    older_than: Annotated[
        str | None,
        typer.Option(
            help="Delete hidden runtime records older than this (e.g. 30d, 12h); "
            "default: SWARM_RETENTION_DAYS (30)."
        ),
    ] = None,
) -> None:
    """Delete old transcripts, call records and snapshots; user-visible memory is kept."""
    from agents.settings.model import load_settings
    from flows.cli.store_actions import prune

    prune(older_than or f"{load_settings().retention_days}d")
