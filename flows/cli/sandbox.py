"""``swarm sandbox serve``: the offline GitHub stand-in, in the foreground."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flows.cli.options import command_group

commands = command_group("sandbox", "The offline GitHub stand-in used by the demo and tests.")


@commands.command("serve")
def sandbox_serve(
    port: Annotated[
        int | None,
        typer.Option(help="Port on 127.0.0.1 (default 8765, or a free one when it is taken)."),
    ] = None,
    directory: Annotated[
        Path,
        typer.Option(
            "--dir",
            "--keys-dir",  # its earlier name, still accepted
            help="The sandbox's own folder: its Apps' keys, sandbox.env (the SWARM_* settings "
            "to load in another terminal) and the store of runs against it.",
        ),
    ] = Path(".swarm/sandbox"),
    webhook_url: Annotated[
        str | None,
        typer.Option(
            help="Send a signed webhook delivery here for every PR opened, push, comment, reply "
            "and issue opened, as GitHub would (for `swarm webhook serve`; the secret is "
            "written to the sandbox's folder and named in sandbox.env)."
        ),
    ] = None,
) -> None:
    """Run the offline GitHub sandbox in the foreground (Ctrl-C stops it).

    It starts fresh every time: same repositories, same commits, no reviews. Its folder is its
    own, so `swarm demo` never touches it.
    """
    from agents.private_files import private_folder
    from sandbox.server import main

    # The Apps' keys and a store go there: this user's alone, like the data directory.
    private_folder(directory, "the sandbox's folder (--dir)")
    args = ["--dir", str(directory)] + (["--port", str(port)] if port is not None else [])
    args += ["--webhook-url", webhook_url] if webhook_url else []
    raise typer.Exit(main(args))
