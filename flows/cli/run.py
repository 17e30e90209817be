"""``swarm demo``, ``swarm run`` and ``swarm serve``: a swarm over pull requests, now or on cron."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flows.cli.options import (
    DEFAULT_ROLE,
    ModelOpt,
    OverlayOpt,
    RepoOpt,
    RoleOpt,
    WorkersOpt,
)

commands = typer.Typer()


@commands.command()
def demo(
    data_dir: Annotated[
        Path, typer.Option(help="Where the demo keeps its store, keys and Prefect database.")
    ] = Path(".swarm"),
    model: ModelOpt = None,
    max_workers: WorkersOpt = None,
) -> None:
    """Run one swarm over the offline sandbox GitHub and print what it did.

    Starts the sandbox and the local Prefect server, reviews every open PR of the sandbox's
    repositories with the scripted model (or Claude when ANTHROPIC_API_KEY is set), and prints
    a summary. Run it twice: the second run posts nothing new.
    """
    from flows.cli.demo import run_demo

    raise typer.Exit(run_demo(data_dir=data_dir, model=model, max_workers=max_workers))


@commands.command()
def run(
    repo: RepoOpt = None,
    role: RoleOpt = DEFAULT_ROLE,
    max_workers: WorkersOpt = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Post nothing; show what would be posted.")
    ] = False,
    model: ModelOpt = None,
    max_cost: Annotated[
        float | None,
        typer.Option(
            "--max-cost",
            min=0.0,
            metavar="USD",
            help="Start no new worker once the run's spend plus what running workers hold "
            "would pass this many dollars; the summary names the PRs left.",
            show_default=False,
        ),
    ] = None,
    overlay: OverlayOpt = None,
    pr: Annotated[
        list[str] | None,
        typer.Option(
            "--pr",
            help="Only OWNER/NAME#N (an issue with --role triager); repeat for several. "
            "N alone when one --repo is given.",
            show_default=False,
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="With --pr: review even at an already reviewed head (a new review, marked as "
            "a re-review) and set the repository's skip rules aside.",
        ),
    ] = False,
    retry: Annotated[
        str | None,
        typer.Option(
            "--retry",
            metavar="RUN",
            help="Do again, as a new run, the PRs (or issues) whose workers failed in run RUN "
            "(its id or the start of it, see `swarm runs`): as its role, skipping any done "
            "since. Nothing failed: says so, exit 0.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Run one swarm now: review every open PR that changed since it was last reviewed.

    Before any worker starts it prints an estimate: PRs, workers, tokens and cost at the model
    registry's prices (`--dry-run --max-cost 0` prints only that and spends nothing). With
    --role triager, triage the open issues its bot has not commented on yet.

    GitHub and App settings come from SWARM_* settings, so the same command works against
    github.com, GitHub Enterprise or the sandbox. Exit status: 0 all done, 1 a worker was
    blocked or failed or a repository could not be read, 2 a setting or flag needs fixing.
    """
    from flows.cli.runner import run_once
    from flows.run.request import RunRequest

    flags = RunRequest(
        repos=repo,
        role=role,
        max_workers=max_workers,
        dry_run=dry_run,
        model=model,
        max_cost=max_cost,
        overlay=overlay,
        targets=pr,
        force=force,
    )
    if retry is not None:
        from flows.cli.retry import retry_request

        again = retry_request(flags, retry)
        if again is None:
            raise typer.Exit(0)  # nothing failed: nothing to do, as a run with no work
        flags = again
    raise typer.Exit(run_once(flags))


@commands.command()
def serve(
    cron: Annotated[
        str, typer.Option(help="When to run, as a cron expression (UTC).")
    ] = "*/30 * * * *",
    repo: RepoOpt = None,
    role: RoleOpt = DEFAULT_ROLE,
    max_workers: WorkersOpt = None,
    model: ModelOpt = None,
    name: Annotated[str, typer.Option(help="Deployment name.")] = "swarm-scheduled",
    overlay: OverlayOpt = None,
) -> None:
    """Serve the swarm as a scheduled Prefect deployment on this machine (Ctrl-C stops it)."""
    from flows.run.request import RunRequest
    from flows.run.serve import serve_schedule

    flags = RunRequest(repos=repo, role=role, max_workers=max_workers, model=model, overlay=overlay)
    serve_schedule(flags, cron=cron, name=name)
