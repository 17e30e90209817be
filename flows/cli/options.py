"""Options shared by several commands, so each reads and behaves the same everywhere."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import typer

RepoOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--repo",
        "-r",
        help="OWNER/NAME to work on; repeat for several. Default: SWARM_REPOS.",
        show_default=False,
    ),
]
RoleOpt = Annotated[str, typer.Option("--role", help="Role id from roles/ that does the work.")]
# The role a command works as when none is named: the shipped review role (RunRequest's default).
DEFAULT_ROLE = "reviewer"
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        envvar="SWARM_MODEL",
        help="'scripted' (offline, deterministic) or a Claude model id.",
        show_default=False,
    ),
]
OverlayOpt = Annotated[
    str | None,
    typer.Option(
        "--overlay",
        help="A role from roles/ laid over --role for every call of the runs started "
        "(session overlay).",
        show_default=False,
    ),
]
WorkersOpt = Annotated[
    int | None,
    typer.Option("--max-workers", min=1, help="Workers running at once (SWARM_MAX_WORKERS)."),
]


@dataclass
class RootSwitch:
    """A root option the whole process reads (``swarm --debug``, ``swarm --verbose``): the root
    command sets it once, before any subcommand runs."""

    flag: str
    on: bool = False


# ``swarm --verbose``: Prefect's own lines on the terminal too, not only the swarm's.
VERBOSE = RootSwitch("--verbose")
# ``swarm --wide``: every table column, however wide the terminal (ids and links whole).
WIDE = RootSwitch("--wide")


# ``--json`` on a listing command: each table as one JSON object a line (JSON Lines), and the
# sentences that are not data on stderr.
JSON_OUTPUT = RootSwitch("--json")


def _json_switch(on: bool) -> bool:
    """The option sets the switch as it is parsed: a command only declares ``JsonOpt``, and
    every table and sentence it prints follows (see console.print_table and console.say)."""
    JSON_OUTPUT.on = on
    return on


JsonOpt = Annotated[
    bool,
    typer.Option(
        "--json",
        help="Each table as one JSON object a line ({title, rows}; times in ISO 8601, UTC), "
        "for scripts; other lines go to stderr.",
        callback=_json_switch,
    ),
]


def command_group(name: str, summary: str) -> typer.Typer:
    """A ``swarm NAME ...`` group: bare ``swarm NAME`` shows its help rather than an error."""
    return typer.Typer(name=name, help=summary, no_args_is_help=True)
