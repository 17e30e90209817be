"""The ``swarm`` command line.

Every command imports what it needs inside its body: Prefect, anthropic and githubkit each take
seconds to import, and ``swarm --help`` should answer at once. Configuration problems print the
setting's name and what is wrong with it, then exit with status 2, never a traceback.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, NoReturn, ParamSpec, TypeVar

import typer

P = ParamSpec("P")
R = TypeVar("R")

EXIT_CONFIG = 2

app = typer.Typer(
    name="swarm",
    help=(
        "Run a swarm of Claude worker agents that review pull requests as least-privilege "
        "GitHub App bots, orchestrated by Prefect.\n\n"
        "Start with **swarm demo**: it runs one swarm against an offline GitHub "
        "sandbox with a scripted model, no credentials needed."
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="markdown",
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
memory_app = typer.Typer(
    help="List, add, edit and remove the memories workers see (facts and procedures).",
    no_args_is_help=True,
)
roles_app = typer.Typer(help="Check the role definitions in roles/.", no_args_is_help=True)
sandbox_app = typer.Typer(help="The offline GitHub stand-in used by the demo and tests.")
store_app = typer.Typer(help="Maintain the shared store (retention).", no_args_is_help=True)
app.add_typer(memory_app, name="memory")
app.add_typer(roles_app, name="roles")
app.add_typer(sandbox_app, name="sandbox", no_args_is_help=True)
app.add_typer(store_app, name="store")


def friendly_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn configuration and role errors into one readable message and exit status 2."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        from agents.config import ConfigError

        try:
            return func(*args, **kwargs)
        except ConfigError as exc:
            _fail(f"configuration error: {exc}")
        except _user_errors() as exc:
            _fail(f"error: {exc}")

    return wrapper


def _user_errors() -> tuple[type[Exception], ...]:
    from agents.roles import RoleLoadError

    return (RoleLoadError,)


def _fail(message: str) -> NoReturn:
    from agents.redact import redact

    typer.echo(redact(message), err=True)
    raise typer.Exit(EXIT_CONFIG)


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
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        envvar="SWARM_MODEL",
        help="'scripted' (offline, deterministic) or a Claude model id.",
        show_default=False,
    ),
]
WorkersOpt = Annotated[
    int | None,
    typer.Option("--max-workers", min=1, help="Workers running at once (SWARM_MAX_WORKERS)."),
]


@app.command()
@friendly_errors
def demo(
    data_dir: Annotated[
        Path, typer.Option(help="Where the demo keeps its store, keys and Prefect database.")
    ] = Path(".swarm"),
    model: ModelOpt = None,
    max_workers: WorkersOpt = None,
) -> None:
    """Run one swarm over the offline sandbox GitHub and print what it did.

    Starts the sandbox and a temporary local Prefect, reviews every open PR of the sandbox's
    repositories with the scripted model (or Claude when ANTHROPIC_API_KEY is set), and prints
    a summary. Run it twice: the second run posts nothing new.
    """
    from flows.demo import run_demo

    raise typer.Exit(run_demo(data_dir=data_dir, model=model, max_workers=max_workers))


@app.command()
@friendly_errors
def run(
    repo: RepoOpt = None,
    role: RoleOpt = "reviewer",
    max_workers: WorkersOpt = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Post nothing; show what would be posted.")
    ] = False,
    model: ModelOpt = None,
) -> None:
    """Run one swarm now: review every open PR that changed since it was last reviewed.

    GitHub and App settings come from SWARM_* settings, so the same command works against
    github.com, GitHub Enterprise or the sandbox.
    """
    from flows.runner import run_once

    raise typer.Exit(
        run_once(repos=repo, role=role, max_workers=max_workers, dry_run=dry_run, model=model)
    )


@app.command()
@friendly_errors
def serve(
    cron: Annotated[
        str, typer.Option(help="When to run, as a cron expression (UTC).")
    ] = "*/30 * * * *",
    repo: RepoOpt = None,
    role: RoleOpt = "reviewer",
    max_workers: WorkersOpt = None,
    model: ModelOpt = None,
    name: Annotated[str, typer.Option(help="Deployment name.")] = "swarm-scheduled",
) -> None:
    """Serve the swarm as a scheduled Prefect deployment on this machine (Ctrl-C stops it)."""
    from flows.serving import serve_schedule

    serve_schedule(
        cron=cron, repos=repo, role=role, max_workers=max_workers, model=model, name=name
    )


@app.command()
@friendly_errors
def verify() -> None:
    """Check each configured identity: mint a read-only token, print login and permissions.

    Never prints a token. Fails when an identity resolves to the maintainer.
    """
    from flows.identity_commands import verify_identities

    raise typer.Exit(verify_identities())


@app.command(
    "exec",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    options_metavar="--role ROLE --repo OWNER/NAME -- PROGRAM [ARGS]...",
)
@friendly_errors
def exec_(
    ctx: typer.Context,
    role: Annotated[str, typer.Option("--role", help="Role whose permissions the token gets.")],
    repo: Annotated[str, typer.Option("--repo", help="OWNER/NAME the token is limited to.")],
) -> None:
    """Run another program with GH_TOKEN set to a fresh, down-scoped bot token.

    Example: swarm exec --role reviewer --repo acme/widgets -- gh pr list

    The program sees only that token: the host's GH_TOKEN, GITHUB_TOKEN and gh configuration
    are hidden from it. The token is revoked when the program exits, and its exit status is
    passed through.
    """
    from flows.identity_commands import exec_with_token

    command = list(ctx.args)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        _fail("error: give the program to run after --, e.g. swarm exec ... -- gh pr list")
    raise typer.Exit(exec_with_token(role=role, repo=repo, command=command))


@app.command()
@friendly_errors
def runs(limit: Annotated[int, typer.Option(help="How many recent runs.")] = 20) -> None:
    """List recent swarm runs from the store."""
    from flows.store_commands import show_runs

    show_runs(limit)


@app.command()
@friendly_errors
def transcript(
    worker: Annotated[str, typer.Argument(help="Worker id (see `swarm runs`).")],
    full: Annotated[bool, typer.Option("--full", help="Show tool calls in full.")] = False,
) -> None:
    """Print one worker's transcript, readable (tool calls compact unless --full)."""
    from flows.store_commands import show_transcript

    show_transcript(worker, full=full)


@app.command()
@friendly_errors
def limits() -> None:
    """Show each identity's rate-limit buckets as last recorded in the store."""
    from flows.store_commands import show_limits

    show_limits()


@app.command()
@friendly_errors
def audit(
    identity: Annotated[str, typer.Option("--identity", help="Bot login, e.g. swarm[bot].")],
    since: Annotated[
        str | None,
        typer.Option(help="Only after this time: ISO date/time or a duration like 24h, 7d."),
    ] = None,
) -> None:
    """List every GitHub write an identity made (for incident review)."""
    from flows.store_commands import show_audit

    show_audit(identity, since)


@memory_app.command("list")
@friendly_errors
def memory_list(
    repo: Annotated[str | None, typer.Option(help="Only this OWNER/NAME.")] = None,
    role: Annotated[str | None, typer.Option(help="Only this role.")] = None,
    all_: Annotated[
        bool, typer.Option("--all", help="Include superseded and deleted entries.")
    ] = False,
) -> None:
    """List memories with where they came from."""
    from flows.store_commands import memory_list as run_list

    run_list(repo=repo, role=role, include_inactive=all_)


@memory_app.command("add")
@friendly_errors
def memory_add(
    body: Annotated[str, typer.Argument(help="The fact or procedure, in one or two sentences.")],
    repo: Annotated[str | None, typer.Option(help="Scope it to OWNER/NAME.")] = None,
    role: Annotated[str | None, typer.Option(help="Scope it to a role.")] = None,
    kind: Annotated[str, typer.Option(help="fact or procedure.")] = "fact",
) -> None:
    """Add a memory that workers of the matching repo/role will see."""
    from flows.store_commands import memory_add as run_add

    run_add(body=body, repo=repo, role=role, kind=kind)


@memory_app.command("edit")
@friendly_errors
def memory_edit(
    memory_id: Annotated[int, typer.Argument(help="Memory id (see `swarm memory list`).")],
    body: Annotated[str, typer.Argument(help="The new text; the old entry is superseded.")],
) -> None:
    """Replace a memory's text; the old version stays as history."""
    from flows.store_commands import memory_edit as run_edit

    run_edit(memory_id, body)


@memory_app.command("rm")
@friendly_errors
def memory_rm(
    memory_id: Annotated[int, typer.Argument(help="Memory id (see `swarm memory list`).")],
) -> None:
    """Delete a memory (kept as deleted for audit, never shown to workers again)."""
    from flows.store_commands import memory_rm as run_rm

    run_rm(memory_id)


@roles_app.command("check")
@friendly_errors
def roles_check(
    directory: Annotated[
        Path | None, typer.Option("--dir", help="Roles directory (default SWARM_ROLES_DIR).")
    ] = None,
) -> None:
    """Validate every role file and print what each role may do."""
    from flows.store_commands import check_roles

    check_roles(directory)


@sandbox_app.command("serve")
@friendly_errors
def sandbox_serve(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.")] = 8765,
    keys_dir: Annotated[
        Path, typer.Option(help="Where to write the Apps' private keys and sandbox.env.")
    ] = Path(".swarm/sandbox"),
) -> None:
    """Run the offline GitHub sandbox in the foreground (Ctrl-C stops it)."""
    from flows.demo import serve_sandbox

    serve_sandbox(port=port, keys_dir=keys_dir)


@store_app.command("prune")
@friendly_errors
def store_prune(
    older_than: Annotated[
        str | None,
        typer.Option(
            help="Delete hidden runtime records older than this (e.g. 30d, 12h); "
            "default: SWARM_RETENTION_DAYS (30)."
        ),
    ] = None,
) -> None:
    """Delete old transcripts, call records and snapshots; user-visible memory is kept."""
    from agents.config import load_settings
    from flows.store_commands import prune

    prune(older_than or f"{load_settings().retention_days}d")


def main() -> None:
    """Console entry point (``swarm``)."""
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
