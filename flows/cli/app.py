"""The ``swarm`` command line: the top-level app and the list of command modules.

Commands live in :mod:`flows.cli`, one small module per topic; each module's ``commands``
Typer is added here, in the order ``swarm --help`` lists them. Every command imports what it needs
inside its body: Prefect, anthropic and githubkit each take seconds to import, and
``swarm --help`` should answer at once. Errors a person can fix become one or two lines and exit
status 2 (see :mod:`flows.cli.errors`); a traceback only with ``--debug``.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import sys
import threading
from collections.abc import Callable
from typing import Annotated, NoReturn

import typer

from flows.cli.errors import DEBUG, SwarmGroup
from flows.cli.options import JSON_OUTPUT, VERBOSE, WIDE
from flows.local.warm_client import run_warm, warm_command

# To add commands: a module in flows/cli/ defining `commands = typer.Typer(...)`, listed here.
COMMAND_MODULES = (
    "flows.cli.run",
    "flows.cli.identities",
    "flows.cli.github_app",
    "flows.cli.history",
    "flows.cli.server",
    "flows.cli.memory",
    "flows.cli.roles",
    "flows.cli.config",
    "flows.cli.webhook",
    "flows.cli.sandbox",
    "flows.cli.store",
    "flows.cli.eval",
)

app = typer.Typer(
    name="swarm",
    cls=SwarmGroup,
    help=(
        "Run a swarm of Claude worker agents that review pull requests as least-privilege "
        "GitHub App bots, orchestrated by Prefect.\n\n"
        "Start with `swarm demo`: it runs one swarm against an offline GitHub "
        "sandbox with a scripted model, no credentials needed."
    ),
    no_args_is_help=True,
    add_completion=False,
    # Plain help: rich and markdown-it cost ~300 ms of imports, and `swarm --help` should answer
    # at once (bench/first_hour.py).
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def _root(
    debug: Annotated[
        bool,
        typer.Option(
            DEBUG.flag, help="Show the full traceback of an error (it may be long; no secrets)."
        ),
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option(
            VERBOSE.flag,
            help="Show Prefect's own log lines on the terminal too (they always reach the "
            "Prefect server's run logs).",
        ),
    ] = False,
    wide: Annotated[
        bool,
        typer.Option(
            WIDE.flag,
            help="Print every table column, however wide; by default a table fits the terminal "
            "(COLUMNS) and names the columns it left out.",
        ),
    ] = False,
) -> None:
    DEBUG.on, VERBOSE.on, WIDE.on = debug, verbose, wide
    JSON_OUTPUT.on = False  # a listing command's own --json sets it


for _module in COMMAND_MODULES:
    app.add_typer(importlib.import_module(_module).commands)


def main() -> None:
    """Console entry point (``swarm``). ``--debug``, ``--verbose`` and ``--wide`` are accepted
    anywhere before ``--``."""
    args = sys.argv[1:]
    head = args[: args.index("--")] if "--" in args else args
    for flag in (
        VERBOSE.flag,
        DEBUG.flag,
        WIDE.flag,
    ):  # root options, accepted after the command too
        if flag in head:
            args.remove(flag)
            args.insert(0, flag)
    if warm_command(args):
        from agents.settings.paths import data_dir_from
        from flows.local.prefect_server import prefect_home

        home = prefect_home(data_dir_from())
        warm = run_warm(args, home)
        if warm is not None:
            leave(warm)
    leave(run_command(args))


def run_command(args: list[str]) -> int:
    """Run ``swarm ARGS`` in this process; its exit status."""
    try:
        app(args=args, prog_name="swarm")
    except KeyboardInterrupt:
        return 130
    except SystemExit as exc:
        return exit_status(exc)
    return 0


def exit_status(exc: SystemExit) -> int:
    """The status Python itself would exit with for ``exc`` (a message: printed, status 1)."""
    if exc.code is None or isinstance(exc.code, int):
        return exc.code or 0
    print(exc.code, file=sys.stderr)
    return 1


def leave(code: int, before_exit: Callable[[], object] | None = None) -> NoReturn:
    """Exit without tearing the interpreter down.

    After a run the process holds ~5,000 modules and thousands of pydantic classes, and freeing
    them one by one at exit took ~2 s of every ``swarm run`` (bench/first_hour.py). Everything a
    normal exit does that matters still happens, in the same order: threads that are not daemons
    are joined (``threading._shutdown``, which also stops idle executor threads), exit handlers
    run (Prefect sends its last logs and events there), and output is flushed.
    """
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    if before_exit is not None:
        with contextlib.suppress(OSError):
            before_exit()
    os._exit(code)
