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
            help="Records older than this (30d, 12h, 90min, 2w; a bare 'm' is refused as "
            "ambiguous); default: SWARM_RETENTION_DAYS (30)."
        ),
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", help="Delete them; without it, only show what would go.")
    ] = False,
) -> None:
    """Delete old transcripts, call records and snapshots (shows what would go unless --yes);
    user-visible memory is kept."""
    from agents.settings.model import load_settings
    from flows.cli.store_actions import prune

    prune(older_than or f"{load_settings().retention_days}d", yes=yes)
