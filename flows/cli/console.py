"""Rich rendering for the CLI: the run summary table and small helpers."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from agents.redact import redact
from flows.run.report import TABLE_COLUMNS, RunReport, outcome_row, review_word

# Redirected output (CI logs, `make demo | tee`) gets a wide table instead of rich's 80 columns.
console = Console() if sys.stdout.isatty() else Console(width=160)
err_console = Console(stderr=True)

_NO_WRAP = frozenset({"worker", "role", "PR", "identity", "cost", "cache hit %"})
_STATUS_STYLE = {
    "succeeded": "green",
    "skipped": "cyan",
    "paused": "yellow",
    "blocked": "bold red",
    "failed": "red",
    "budget_exhausted": "magenta",
}


def say(text: str) -> None:
    """A plain line for a person: no markup, no highlighting, never wrapped mid-sentence."""
    console.print(redact(text), markup=False, highlight=False, soft_wrap=True)


def table(title: str, columns: Sequence[str], rows: Iterable[Sequence[object]]) -> Table:
    """A plain rich table whose every cell went through redaction."""
    out = Table(title=escape(title), show_lines=False, header_style="bold")
    for index, column in enumerate(columns):
        # The first column names the row (a role, a run id): keep it whole.
        out.add_column(column, overflow="fold", no_wrap=index == 0)
    for row in rows:
        out.add_row(*(_cell(cell) for cell in row))
    return out


def _cell(value: object) -> Text:
    """Cell text is data, never rich markup: ``swarm-reviewer[bot]`` must stay as it is."""
    return Text("-" if value is None else redact(str(value)))


def mapping_table(title: str, rows: Sequence[Mapping[str, object]]) -> Table:
    columns = list(rows[0]) if rows else ["(empty)"]
    return table(title, columns, ([row.get(c) for c in columns] for row in rows))


def print_report(report: RunReport, *, link: bool = True) -> None:
    """The run's workers as a table, then the headline and anything that needs attention, and
    (``link``) where the run is in the Prefect UI."""
    if report.outcomes:
        identities = {o.identity_login for o in report.outcomes}
        columns = [c for c in TABLE_COLUMNS if c != "identity" or len(identities) > 1]
        title = f"swarm run {report.run_id}"
        if len(identities) == 1 and None not in identities:
            title += f" as {identities.pop()}"
        out = Table(title=escape(title), header_style="bold")
        for column in columns:
            out.add_column(column, overflow="fold", no_wrap=column in _NO_WRAP)
        for outcome in report.outcomes:
            row = outcome_row(outcome)
            # Links go below the table, whole: a link folded inside a cell cannot be opened.
            row["review"] = review_word(outcome)
            style = _STATUS_STYLE.get(outcome.status, "")
            out.add_row(*(_cell(row[c]) for c in columns), style=style)
        console.print(out)
    for outcome in report.outcomes:
        if outcome.review_url:
            say(f"review of {outcome.target}: {outcome.review_url}")
    for outcome in report.outcomes:
        if outcome.dry_run_preview:
            console.print(f"[bold]would post on {escape(outcome.target)}[/bold]:")
            console.print(redact(outcome.dry_run_preview), markup=False, highlight=False)
    style = "green" if report.ok else "red"
    console.print(f"[{style}]{escape(report.headline())}.[/{style}]")
    for outcome in report.failed:
        console.print(
            f"  [red]{escape(outcome.target)}[/red] ({outcome.role}): "
            + escape(redact(outcome.reason or ""))
        )
    if report.left_by_cost_cap:
        console.print(
            f"  [yellow]{len(report.left_by_cost_cap)} PR(s) left[/yellow]: "
            + escape(report.cost_cap_reason or "the run's cost cap")
            + "; the next run retries them: "
            + escape(", ".join(report.left_by_cost_cap))
        )
    for line in report.unreadable:
        # Which PR or repository, and why: the next run tries it again.
        console.print(f"  [red]unreadable[/red] {escape(redact(line))}")
    for paused in report.paused:
        until = paused.paused_until.isoformat() if paused.paused_until else "unknown"
        who = escape(paused.identity)
        console.print(f"  [yellow]{who}[/yellow] paused by rate limits until {until}")
    for line in report.config_errors:
        console.print(f"  [red]{escape(redact(line))}[/red] (repository skipped until fixed)")
    if report.config_told:
        console.print(f"  told on {escape(', '.join(report.config_told))} (once per file version)")
    for line in report.skipped:
        console.print(f"  skipped {escape(redact(line))}")
    if link and report.ui_link:
        say(f"Prefect UI: {report.ui_link}")
