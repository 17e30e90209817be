"""``swarm webhook serve``: react to GitHub events instead of polling."""

from __future__ import annotations

from typing import Annotated

import typer

from flows.cli.options import OverlayOpt, command_group

commands = command_group("webhook", "Receive GitHub webhooks and run the swarm per event.")


@commands.command("serve")
def webhook_serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8787,
    deployment: Annotated[
        str | None,
        typer.Option(
            help="Start each event's run on this swarm-run deployment (NAME/DEPLOYMENT) "
            "instead of in this process (default SWARM_WEBHOOK_DEPLOYMENT)."
        ),
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(min=1, max=64, help="In-process runs at once (SWARM_WEBHOOK_CONCURRENCY)."),
    ] = None,
    overlay: OverlayOpt = None,
) -> None:
    """Serve POST /github/webhook (and GET /healthz) for the GitHub App's webhooks.

    Deliveries must carry a valid X-Hub-Signature-256 made with SWARM_WEBHOOK_SECRET_FILE;
    pull requests opened or pushed to are reviewed, issues opened are triaged, and /swarm
    commands from people with write access are run. See docs/events.md. With --overlay every
    run started carries that session overlay (a command's focus still lies above it).
    """
    from flows.webhook.serve import serve_webhooks

    serve_webhooks(
        host=host, port=port, deployment=deployment, concurrency=concurrency, overlay=overlay
    )
