"""``swarm app create``: the swarm's GitHub Apps made with GitHub's App manifest flow."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flows.cli.options import command_group

commands = command_group("app", "Make the swarm's GitHub Apps (one per identity the roles name).")


@commands.command("create")
def app_create(
    github_url: Annotated[
        str,
        typer.Option(
            help="GitHub's web address: https://github.com, or your GitHub Enterprise Server's "
            "(https://HOST; its API is https://HOST/api/v3)."
        ),
    ] = "https://github.com",
    org: Annotated[
        str | None,
        typer.Option(help="Make the Apps for this organization (default: your own account)."),
    ] = None,
    identity: Annotated[
        list[str] | None,
        typer.Option(
            "--identity",
            help="Only this identity's App; repeat for several (default: every identity the "
            "roles name).",
            show_default=False,
        ),
    ] = None,
    webhook_url: Annotated[
        str | None,
        typer.Option(
            help="Where GitHub delivers events (`swarm webhook serve` behind your proxy, e.g. "
            "https://swarm.example.com/github/webhook); without it the Apps get no webhook.",
            show_default=False,
        ),
    ] = None,
    maintainer: Annotated[
        str | None,
        typer.Option(
            help="Your GitHub login, the one the swarm must never act as (default: "
            "SWARM_MAINTAINER_LOGIN, or the account the Apps are made for).",
            show_default=False,
        ),
    ] = None,
    name_prefix: Annotated[
        str | None,
        typer.Option(
            help="App names are PREFIX-reviewer, PREFIX-triage, ... (default: the organization, "
            "else swarm); GitHub's page lets you change each.",
            show_default=False,
        ),
    ] = None,
    secrets_dir: Annotated[
        Path, typer.Option(help="Where the keys, the webhook secret and the settings go.")
    ] = Path("secrets"),
    force: Annotated[
        bool, typer.Option("--force", help="Replace key and settings files already there.")
    ] = False,
    open_browser: Annotated[
        bool, typer.Option("--browser/--no-browser", help="Open the page in your browser.")
    ] = True,
) -> None:
    """Make the swarm's GitHub Apps with GitHub's App manifest flow, then check them.

    Serves a page on 127.0.0.1 with one button per App: each posts a manifest (the permissions
    of that identity's roles, the events the swarm acts on) to GitHub, which makes the App and
    sends its one-time code back to the page. The App's id, private key (0600), webhook secret
    and settings go to the secrets folder and `github-app.env` in it; then you install each App
    on the repositories the swarm may work on, and `swarm verify` runs.

    Exit status: 0 when every App is made, installed and verified; 2 for a flag or file to fix;
    130 when interrupted (what was made is kept and listed).
    """
    from flows.cli.app_actions import AppRequest, create_apps

    raise typer.Exit(
        create_apps(
            AppRequest(
                github_url=github_url,
                org=org,
                identities=tuple(identity or ()),
                webhook_url=webhook_url,
                maintainer=maintainer,
                name_prefix=name_prefix,
                secrets_dir=secrets_dir,
                force=force,
                open_browser=open_browser,
            )
        )
    )
