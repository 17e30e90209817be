"""``swarm roles check``: every role file validated, with what each role may do."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flows.cli.options import command_group

commands = command_group("roles", "Check the role definitions in roles/.")


@commands.command("check")
def roles_check(
    directory: Annotated[
        Path | None, typer.Option("--dir", help="Roles directory (default SWARM_ROLES_DIR).")
    ] = None,
) -> None:
    """Validate every role file and print what each role may do.

    When identities are configured, each role's identity must be one of them.
    """
    from flows.cli.role_actions import check_roles

    check_roles(directory)
