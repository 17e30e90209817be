"""``swarm verify`` and ``swarm exec``: the configured identities, checked and lent."""

from __future__ import annotations

from typing import Annotated

import typer

commands = typer.Typer()


@commands.command()
def verify() -> None:
    """Check each configured identity: mint a read-only token, print login and permissions.

    Never prints a token. Fails when an identity resolves to the maintainer.
    """
    from flows.cli.identity_actions import verify_identities

    raise typer.Exit(verify_identities())


@commands.command(
    "exec",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    options_metavar="--role ROLE --repo OWNER/NAME [--env NAME]... -- PROGRAM [ARGS]...",
)
def exec_(
    ctx: typer.Context,
    role: Annotated[str, typer.Option("--role", help="Role whose permissions the token gets.")],
    repo: Annotated[str, typer.Option("--repo", help="OWNER/NAME the token is limited to.")],
    env: Annotated[
        list[str] | None,
        typer.Option(
            "--env",
            metavar="NAME",
            help="Also pass this variable from your environment (repeatable). Never a GitHub, "
            "git, SSH, netrc or SWARM_ variable, nor a value holding a credential.",
        ),
    ] = None,
) -> None:
    """Run another program with GH_TOKEN set to a fresh, down-scoped bot token.

    Example: swarm exec --role reviewer --repo acme/widgets -- gh pr list

    The program gets an environment built from an allow-list, nothing else of yours: PATH,
    TERM, TZ and the locale (LANG, LANGUAGE, LC_ALL and the LC_ categories by name, with values
    that name a locale); a fresh temporary HOME (removed when it exits) with its own XDG
    directories; the bot token as GH_TOKEN and GITHUB_TOKEN, GH_HOST and GITHUB_API_URL; git
    set up in that HOME to send the token over HTTPS to that host only, with
    GIT_CONFIG_NOSYSTEM=1 and GIT_TERMINAL_PROMPT=0; and the variables you name with --env. No
    SSH agent, netrc, git credential helper, other token or SWARM_ setting reaches it. The token
    is revoked when the program exits, and its exit status is passed through.
    """
    from agents.settings.model import ConfigError
    from flows.cli.identity_actions import exec_with_token

    command = list(ctx.args)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise ConfigError("give the program to run after --, e.g. swarm exec ... -- gh pr list")
    raise typer.Exit(exec_with_token(role=role, repo=repo, command=command, env_names=env or []))
