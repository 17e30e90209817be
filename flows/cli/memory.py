"""``swarm memory``: what workers remember, in reach of a person. User memories
(``list|show|add|edit|rm``), agent notes (``notes``, ``notes edit|rm``), continuity
(``continuity``) and learnings proposed from review feedback (``review``), each with provenance."""

from __future__ import annotations

from typing import Annotated

import typer

from flows.cli.options import DEFAULT_ROLE, JsonOpt

commands = typer.Typer(
    name="memory",
    help=(
        "List, show, add, edit and remove what workers remember: memories, agent notes, "
        "continuity, and learnings proposed from review feedback."
    ),
    no_args_is_help=True,
)

# The arguments and filters several commands take, each said once.
MemoryId = Annotated[int, typer.Argument(help="Memory id (see `swarm memory list`).")]
NoteId = Annotated[int, typer.Argument(help="Agent note id (see `swarm memory notes`).")]
OnlyRepo = Annotated[str | None, typer.Option(help="Only this OWNER/NAME.")]
OnlyRole = Annotated[str | None, typer.Option(help="Only this role.")]


@commands.command("list")
def memory_list(
    repo: OnlyRepo = None,
    role: OnlyRole = None,
    all_: Annotated[
        bool, typer.Option("--all", help="Include superseded and deleted entries.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """List memories with where they came from."""
    from flows.cli.memory_actions import memory_list as run_list

    run_list(repo=repo, role=role, include_inactive=all_)


@commands.command("add")
def memory_add(
    body: Annotated[str, typer.Argument(help="The fact or procedure, in one or two sentences.")],
    repo: Annotated[str | None, typer.Option(help="Scope it to OWNER/NAME.")] = None,
    role: Annotated[str | None, typer.Option(help="Scope it to a role.")] = None,
    kind: Annotated[str, typer.Option(help="fact or procedure.")] = "fact",
) -> None:
    """Add a memory that workers of the matching repo/role will see."""
    from flows.cli.memory_actions import memory_add as run_add

    run_add(body=body, repo=repo, role=role, kind=kind)


@commands.command("edit")
def memory_edit(
    memory_id: MemoryId,
    body: Annotated[str, typer.Argument(help="The new text; the old entry is superseded.")],
) -> None:
    """Replace a memory's text; the old version stays as history."""
    from flows.cli.memory_actions import memory_edit as run_edit

    run_edit(memory_id, body)


@commands.command("rm")
def memory_rm(
    memory_id: MemoryId,
) -> None:
    """Delete a memory (kept as deleted for audit, never shown to workers again)."""
    from flows.cli.memory_actions import memory_rm as run_rm

    run_rm(memory_id)


@commands.command("show")
def memory_show(
    memory_id: MemoryId,
) -> None:
    """One memory whole, with where it came from (run, worker, PR, who, links)."""
    from flows.cli.memory_views import memory_show as run_show

    run_show(memory_id)


notes = typer.Typer(
    name="notes",
    help="Agent notes and continuity workers wrote: list (default), edit, rm.",
    invoke_without_command=True,
)
commands.add_typer(notes)


@notes.callback()
def notes_list(
    ctx: typer.Context,
    repo: OnlyRepo = None,
    role: OnlyRole = None,
    worker: Annotated[str | None, typer.Option(help="Only this worker id.")] = None,
    kind: Annotated[str | None, typer.Option(help="note or continuity.")] = None,
    limit: Annotated[int, typer.Option(min=1, help="At most this many, newest first.")] = 50,
    as_json: JsonOpt = False,
) -> None:
    """List agent notes with their run, worker and pull request."""
    if ctx.invoked_subcommand is not None:
        return
    from flows.cli.memory_views import notes_list as run_list

    run_list(repo=repo, role=role, worker=worker, kind=kind, limit=limit)


@notes.command("edit")
def note_edit(
    note_id: NoteId,
    body: Annotated[str, typer.Argument(help="The corrected text.")],
) -> None:
    """Correct what a worker wrote."""
    from flows.cli.memory_views import note_edit as run_edit

    run_edit(note_id, body)


@notes.command("rm")
def note_rm(
    note_id: NoteId,
) -> None:
    """Delete an agent note; no worker reads it again."""
    from flows.cli.memory_views import note_rm as run_rm

    run_rm(note_id)


@commands.command("continuity")
def memory_continuity(
    repo: Annotated[str, typer.Option(help="OWNER/NAME the role worked on.")],
    role: Annotated[str, typer.Option(help="The role.")] = DEFAULT_ROLE,
    pr: Annotated[int | None, typer.Option(min=1, help="The pull request (or issue).")] = None,
) -> None:
    """Where the last session of a role on a repository (and PR) left off."""
    from flows.cli.memory_views import continuity_show

    continuity_show(repo=repo, role=role, pr=pr)


@commands.command("review")
def memory_review(
    repo: Annotated[str | None, typer.Option(help="Only proposals for OWNER/NAME.")] = None,
    accept: Annotated[
        int | None, typer.Option("--accept", help="Accept this proposal.", show_default=False)
    ] = None,
    reject: Annotated[
        int | None, typer.Option("--reject", help="Reject this proposal.", show_default=False)
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Learnings proposed from replies and reactions to the bot's review comments."""
    from flows.cli.memory_review import review_decide, review_list

    if accept is not None and reject is not None:
        from agents.settings.model import ConfigError

        raise ConfigError("--accept and --reject: give one of them")
    if accept is not None or reject is not None:
        review_decide(accept if accept is not None else reject or 0, accept=accept is not None)
        return
    review_list(repo=repo)
