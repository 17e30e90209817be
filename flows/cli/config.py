"""``swarm config check PATH``: validate a repository's ``.github/swarm.yaml`` locally."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flows.cli.options import command_group

commands = command_group("config", "Check a repository's .github/swarm.yaml before committing it.")


@commands.command("check")
def config_check(
    path: Annotated[Path, typer.Argument(help="The file to check, e.g. .github/swarm.yaml.")],
) -> None:
    """Validate the file against the strict schema and the roles of this swarm's roles
    directory; each problem is printed as file:line.

    Exit status: 0 valid, 2 invalid or unreadable.
    """
    from agents.planning.repo_config import RepoConfigError, parse_repo_config
    from agents.roles.files import load_roles
    from agents.settings.model import ConfigError, load_settings
    from flows.cli.console import say

    known_roles = load_roles(load_settings().roles_dir)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.__class__.__name__}") from None
    try:
        config = parse_repo_config(text, source=str(path), known_roles=known_roles)
    except RepoConfigError as exc:
        for problem in exc.problems:
            typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(2) from None
    roles = ", ".join(config.roles) if config.roles is not None else "every role"
    say(f"{path}: valid ({roles}; {len(config.instructions)} instruction(s))")
