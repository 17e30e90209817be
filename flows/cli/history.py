"""``swarm runs``, ``deliveries``, ``transcript``, ``limits`` and ``audit``: what the swarm did,
from the store."""

from __future__ import annotations

from typing import Annotated

import typer

from flows.cli.options import JsonOpt

commands = typer.Typer()


@commands.command()
def runs(
    run_id: Annotated[
        str | None,
        typer.Argument(
            help="A run id or its start: that run, its workers and every item it skipped or "
            "left, with the reason (default: the latest run with workers).",
            show_default=False,
        ),
    ] = None,
    limit: Annotated[int, typer.Option(help="How many recent runs.")] = 20,
    as_json: JsonOpt = False,
) -> None:
    """List recent swarm runs from the store, and what one of them did and left."""
    from flows.cli.store_actions import show_runs

    show_runs(limit, run_id=run_id)


@commands.command()
def deliveries(
    limit: Annotated[int, typer.Option(help="How many deliveries.")] = 50,
    as_json: JsonOpt = False,
) -> None:
    """List webhook deliveries and what became of each: lost or unfinished ones first."""
    from flows.cli.store_actions import show_deliveries

    show_deliveries(limit)


@commands.command()
def transcript(
    worker: Annotated[str, typer.Argument(help="Worker id (see `swarm runs`).")],
    full: Annotated[bool, typer.Option("--full", help="Show tool calls in full.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Print one worker's transcript, readable (tool calls compact unless --full); with --json
    its events whole, as data."""
    from flows.cli.store_actions import show_transcript

    show_transcript(worker, full=full)


@commands.command()
def limits(as_json: JsonOpt = False) -> None:
    """Show each identity's rate-limit buckets as last recorded in the store."""
    from flows.cli.store_actions import show_limits

    show_limits()


@commands.command()
def audit(
    identity: Annotated[
        str,
        typer.Option("--identity", help="Bot login, e.g. swarm-reviewer[bot] (see `swarm runs`)."),
    ],
    since: Annotated[
        str | None,
        typer.Option(help="Only after this time: ISO date/time or a duration like 24h, 7d."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """List every GitHub write an identity made (for incident review)."""
    from flows.cli.store_actions import show_audit

    show_audit(identity, since)
