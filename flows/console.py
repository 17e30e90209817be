"""Rich rendering for the CLI: the run summary table and small helpers."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence

from rich.console import Console
from rich.table import Table

from agents.redact import redact
from flows.report import TABLE_COLUMNS, RunReport, outcome_row

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


def table(title: str, columns: Sequence[str], rows: Iterable[Sequence[object]]) -> Table:
    """A plain rich table whose every cell went through redaction."""
    out = Table(title=title, show_lines=False, header_style="bold")
    for index, column in enumerate(columns):
        # The first column names the row (a role, a run id): keep it whole.
        out.add_column(column, overflow="fold", no_wrap=index == 0)
    for row in rows:
        out.add_row(*(redact(str(cell)) if cell is not None else "-" for cell in row))
    return out


def mapping_table(title: str, rows: Sequence[Mapping[str, object]]) -> Table:
    columns = list(rows[0]) if rows else ["(empty)"]
    return table(title, columns, ([row.get(c) for c in columns] for row in rows))


def print_report(report: RunReport) -> None:
    """The run's workers as a table, then the headline and anything that needs attention."""
    if report.outcomes:
        identities = {o.identity_login for o in report.outcomes}
        columns = [c for c in TABLE_COLUMNS if c != "identity" or len(identities) > 1]
        title = f"swarm run {report.run_id}"
        if len(identities) == 1 and None not in identities:
            title += f" as {identities.pop()}"
        out = Table(title=title, header_style="bold")
        for column in columns:
            out.add_column(column, overflow="fold", no_wrap=column in _NO_WRAP)
        for outcome in report.outcomes:
            row = outcome_row(outcome)
            style = _STATUS_STYLE.get(outcome.status, "")
            out.add_row(*(redact(row[c]) for c in columns), style=style)
        console.print(out)
    style = "green" if report.ok else "red"
    console.print(f"[{style}]{report.headline()}.[/{style}]")
    for outcome in report.failed:
        console.print(
            f"  [red]{outcome.target}[/red] ({outcome.role}): {redact(outcome.reason or '')}"
        )
    for paused in report.paused:
        until = paused.paused_until.isoformat() if paused.paused_until else "unknown"
        console.print(f"  [yellow]{paused.identity}[/yellow] paused by rate limits until {until}")
