"""``swarm eval``: review a labelled set of pull requests and score the findings (``--kind
implement``: implement a set of issues and run their hidden tests on the pull requests); ``swarm
eval compare`` says what changed between two evaluations; ``swarm eval import`` turns pull
request URLs and their golden comments into a set."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flows.cli.options import ModelOpt, WorkersOpt

commands = typer.Typer(
    name="eval",
    help=(
        "Measure review quality (precision and recall of findings on a labelled set), or with "
        "--kind implement the writer's (issues solved, judged by hidden tests)."
    ),
    invoke_without_command=True,
)

# The kinds of work an evaluation measures; the first is the default.
EVAL_KINDS = ("review", "implement")


@commands.callback()
def evaluate(
    ctx: typer.Context,
    kind: Annotated[
        str,
        typer.Option(
            "--kind",
            help="What to measure: 'review' (PRs scored against labels) or 'implement' "
            "(issues implemented, judged by hidden tests).",
        ),
    ] = "review",
    set_dir: Annotated[
        Path | None,
        typer.Option(
            "--set",
            help="Folder of the set's files: PRs, or issues with --kind implement "
            "(default: the shipped set).",
        ),
    ] = None,
    model: ModelOpt = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the results as JSON to this file.")
    ] = None,
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            help="Exit 1 when precision or recall (with --kind implement: the success rate) "
            "falls below this JSON's (a regression guard).",
        ),
    ] = None,
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            help="A model that decides the pairs place cannot ('scripted' or a Claude id).",
            show_default=False,
        ),
    ] = None,
    data_dir: Annotated[
        Path, typer.Option(help="Where evaluations keep their stores and keys.")
    ] = Path(".swarm"),
    max_workers: WorkersOpt = None,
) -> None:
    """Review every PR of a labelled set on the offline sandbox GitHub and score the findings.

    Prints precision, recall and F1 overall and by severity and category, false findings on the
    clean PRs, and cost, tokens and time per PR. With --kind implement: the writer implements
    each issue of a set, the reviewer and the fixer take each pull request through the fix
    rounds, its final head runs tests the writer never saw, and it prints per issue the pull
    request, its rounds to clean, the hidden tests' result, cost, turns and test runs, and the
    success rate and mean rounds to clean. Against Claude: set ANTHROPIC_API_KEY and pass --model
    with a Claude model id (docs/eval.md).
    """
    if ctx.invoked_subcommand is not None:
        return
    from agents.settings.model import ConfigError

    if kind not in EVAL_KINDS:
        raise ConfigError(f"--kind: {kind!r} is not one of: {', '.join(EVAL_KINDS)}")
    if kind == "implement":
        if judge is not None:
            raise ConfigError("--judge scores review findings; --kind implement has none")
        from flows.cli.evaluation_implement import run_implement_eval
        from sandbox.eval import IMPLEMENT_SET

        raise typer.Exit(
            run_implement_eval(
                set_dir=set_dir or IMPLEMENT_SET,
                model=model or "scripted",
                data_dir=data_dir,
                json_out=json_out,
                baseline=baseline,
                max_workers=max_workers,
            )
        )
    from flows.cli.evaluation import run_eval
    from sandbox.eval import DEFAULT_SET

    raise typer.Exit(
        run_eval(
            set_dir=set_dir or DEFAULT_SET,
            model=model or "scripted",
            data_dir=data_dir,
            json_out=json_out,
            baseline=baseline,
            judge_model=judge,
            max_workers=max_workers,
        )
    )


@commands.command("compare")
def compare(
    a: Annotated[Path, typer.Argument(help="The evaluation before (its --json file).")],
    b: Annotated[Path, typer.Argument(help="The evaluation after.")],
) -> None:
    """What B gained and lost against A: precision, recall and F1, and per PR the problems
    found or missed and the false findings."""
    from agents.eval.results import compare as compared
    from agents.eval.results import comparison_table, read

    print(comparison_table(compared(read(a), read(b))))


@commands.command("import")
def import_set(
    golden: Annotated[Path, typer.Argument(help="YAML list of PR URLs and golden comments.")],
    to: Annotated[Path, typer.Option("--to", help="The set folder to write the PR files to.")],
    api_url: Annotated[
        str, typer.Option("--api-url", help="GitHub's REST API (or an Enterprise Server's).")
    ] = "https://api.github.com",
    token_env: Annotated[
        str | None,
        typer.Option(
            "--token-env",
            help="The environment variable holding a token to read with (none: anonymous).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Read each PR's changed files at its base and head from GitHub into a set folder, its
    golden comments as labels (needs network access to that GitHub)."""
    from flows.cli.evaluation import import_golden

    raise typer.Exit(import_golden(golden, to, api_url=api_url, token_env=token_env))
