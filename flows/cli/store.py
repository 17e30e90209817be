"""``swarm store prune`` and ``swarm store copy``: upkeep of the shared store, and moving it."""

from __future__ import annotations

from typing import Annotated

import typer

from flows.cli.options import command_group

commands = command_group(
    "store", "Maintain the shared store (retention) or move it to another database."
)


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


@commands.command("copy")
def store_copy(
    to: Annotated[
        str,
        typer.Option(
            "--to",
            help="The new store's database URL (postgresql+psycopg://USER@HOST/DB or "
            "sqlite:////PATH/swarm.db); it must hold no store yet.",
            show_default=False,
        ),
    ],
    from_url: Annotated[
        str | None,
        typer.Option(
            "--from",
            help="The store to copy; default: the configured one (SWARM_STORE_URL, else the "
            "swarm.db in SWARM_DATA_DIR).",
            show_default=False,
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Only count the rows it would copy; write nothing.")
    ] = False,
) -> None:
    """Copy the whole store into another, empty database (SQLite to PostgreSQL, say), every row
    and id as it is: runs over the new store skip what runs over the old one did."""
    from flows.cli.store_actions import copy

    copy(to, from_url, dry_run=dry_run)
