"""``swarm memory list|add|edit|rm``: the memories workers see, with their provenance."""

from __future__ import annotations

from typing import Annotated

import typer

commands = typer.Typer(
    name="memory",
    help="List, add, edit and remove the memories workers see (facts and procedures).",
    no_args_is_help=True,
)


@commands.command("list")
def memory_list(
    repo: Annotated[str | None, typer.Option(help="Only this OWNER/NAME.")] = None,
    role: Annotated[str | None, typer.Option(help="Only this role.")] = None,
    all_: Annotated[
        bool, typer.Option("--all", help="Include superseded and deleted entries.")
    ] = False,
) -> None:
    """List memories with where they came from."""
    from flows.memory_commands import memory_list as run_list

    run_list(repo=repo, role=role, include_inactive=all_)


@commands.command("add")
def memory_add(
    body: Annotated[str, typer.Argument(help="The fact or procedure, in one or two sentences.")],
    repo: Annotated[str | None, typer.Option(help="Scope it to OWNER/NAME.")] = None,
    role: Annotated[str | None, typer.Option(help="Scope it to a role.")] = None,
    kind: Annotated[str, typer.Option(help="fact or procedure.")] = "fact",
) -> None:
    """Add a memory that workers of the matching repo/role will see."""
    from flows.memory_commands import memory_add as run_add

    run_add(body=body, repo=repo, role=role, kind=kind)


@commands.command("edit")
def memory_edit(
    memory_id: Annotated[int, typer.Argument(help="Memory id (see `swarm memory list`).")],
    body: Annotated[str, typer.Argument(help="The new text; the old entry is superseded.")],
) -> None:
    """Replace a memory's text; the old version stays as history."""
    from flows.memory_commands import memory_edit as run_edit

    run_edit(memory_id, body)


@commands.command("rm")
def memory_rm(
    memory_id: Annotated[int, typer.Argument(help="Memory id (see `swarm memory list`).")],
) -> None:
    """Delete a memory (kept as deleted for audit, never shown to workers again)."""
    from flows.memory_commands import memory_rm as run_rm

    run_rm(memory_id)
