"""Rich rendering for the CLI: the run summary table and small helpers."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from agents.redact import redact, redact_obj
from flows.cli.options import JSON_OUTPUT, WIDE
from flows.run.report import TABLE_COLUMNS, RunReport, outcome_row, review_word

# A terminal's own width, or COLUMNS when set (also when the output is captured); redirected
# output without COLUMNS (CI logs, `make demo | tee`) gets 160 columns rather than rich's 80.
console = Console() if sys.stdout.isatty() or os.environ.get("COLUMNS") else Console(width=160)
err_console = Console(stderr=True)


def _room() -> int:
    """The width a table gets, read when it is printed: rich fixes a console's width when it is
    made, so a console made in one environment (a test process with COLUMNS=80) would print
    every later table at that width whatever COLUMNS says by then."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return 160


# The worker table's columns in the order they go when the terminal is too narrow: worker, PR,
# outcome and cost stay (the id is what `swarm transcript` takes; the cost is what it cost).
_WORKER_DROP = ("cache hit %", "GitHub calls", "LLM tokens", "identity", "review", "role")
_WORKER_WRAPS = frozenset({"PR", "outcome"})
# A column of free text (a reason, a note) wraps over lines but keeps at least this width.
_WRAP_MIN = 16
_STATUS_STYLE = {
    "succeeded": "green",
    "skipped": "cyan",
    "paused": "yellow",
    "blocked": "bold red",
    "failed": "red",
    "budget_exhausted": "magenta",
}


class Usd(float):
    """Dollars: ``$0.0282`` in a table, a plain number under ``--json`` (json writes a float's
    own repr, not this ``str``)."""

    def __str__(self) -> str:
        return f"${float(self):.4f}"


def say(text: str) -> None:
    """A plain line for a person: no markup, no highlighting, never wrapped mid-sentence (on
    stderr under ``--json``, where stdout holds only data)."""
    out = err_console if JSON_OUTPUT.on else console
    out.print(redact(text), markup=False, highlight=False, soft_wrap=True)


def print_table(
    title: str,
    columns: Sequence[str],
    rows: Iterable[Sequence[object]],
    *,
    wraps: Collection[str] = (),
    drop: Sequence[str] | None = None,
    styles: Sequence[str] | None = None,
    empty: str | None = None,
) -> None:
    """Print a table that fits the terminal: every cell whole on one line (ids, costs, times),
    except the ``wraps`` columns (free text), which wrap over lines. When the terminal is too
    narrow for all the columns, the ``drop`` columns go, first named first (default: from the
    right, never the first), and a line names them; ``swarm --wide`` prints every column.
    ``empty``: the sentence a person gets instead of a table with no rows (under ``--json`` a
    script gets the table, its rows empty, as always)."""
    rows = list(rows)
    if JSON_OUTPUT.on:
        _print_json(title, columns, rows)
        return
    if not rows and empty is not None:
        say(empty)
        return
    cells = [[_cell(value) for value in row] for row in rows]
    widths = [
        _widths(name, [row[i] for row in cells], name in wraps) for i, name in enumerate(columns)
    ]
    shown = list(range(len(columns)))
    order = list(drop) if drop is not None else list(reversed(columns[1:]))
    room = console.width = _room()
    if WIDE.on:
        room = max(room, _table_width([w.whole for w in widths]))
    else:
        for name in order:
            if _table_width([widths[i].preferred for i in shown]) <= room:
                break
            shown.remove(columns.index(name))
    # Free text keeps its preferred width when that fits, else wraps down to its longest word,
    # and shares what room is left. Every width is fixed here: rich's own squeezing would fold
    # a column below its longest word and crop the table at the terminal's edge.
    fits = _table_width([widths[i].preferred for i in shown]) <= room
    width = {i: widths[i].preferred if fits else widths[i].least for i in shown}
    # Still too wide at every free-text column's longest word (a link in a reason): that word
    # folds, the widest free text first, down to _WRAP_MIN. Otherwise rich would squeeze the
    # columns that must stay whole, an id cut or a status at zero width.
    over = _table_width(list(width.values())) - room
    for i in sorted((i for i in shown if columns[i] in wraps), key=lambda i: -width[i]):
        if over <= 0:
            break
        take = min(over, max(0, width[i] - _WRAP_MIN))
        width[i], over = width[i] - take, over - take
    spare = room - _table_width(list(width.values()))
    for i in shown:
        grow = max(0, min(spare, widths[i].whole - width[i]))
        width[i], spare = width[i] + grow, spare - grow
    out = Table(title=escape(title), header_style="bold")
    for i in shown:
        out.add_column(columns[i], overflow="fold", no_wrap=columns[i] not in wraps, width=width[i])
    for index, row in enumerate(cells):
        out.add_row(*(row[i] for i in shown), style=styles[index] if styles else None)
    # --wide: as wide as every column needs, past the terminal's edge (a console prints no
    # wider than its own width).
    (Console(file=console.file, width=room) if WIDE.on else console).print(out)
    hidden = [c for i, c in enumerate(columns) if i not in shown]
    if hidden:
        # Wrapped at spaces to the table's width: the note holds no link to keep whole, and a
        # terminal's own wrapping would cut a column's name in two.
        note = f"(left out to fit {room} columns, `swarm --wide` shows them: {', '.join(hidden)})"
        out_console = err_console if JSON_OUTPUT.on else console
        out_console.print(redact(note), markup=False, highlight=False, width=room)


@dataclass(frozen=True)
class _Widths:
    whole: int  # every cell on one line
    preferred: int  # free text: wrapped, but at least _WRAP_MIN wide
    least: int  # free text: its longest word


def _widths(header: str, cells: Sequence[Text], wraps: bool) -> _Widths:
    """The widths a column can take: a column that does not wrap only its longest cell whole."""
    whole = max([cell_len(header), *(c.cell_len for c in cells)])
    if not wraps:
        return _Widths(whole, whole, whole)
    words = max([cell_len(header), *(cell_len(w) for c in cells for w in c.plain.split())])
    return _Widths(whole, min(whole, max(words, _WRAP_MIN)), min(whole, words))


def _table_width(widths: Sequence[int]) -> int:
    """A rich table's width for these column widths: one space each side and a rule between."""
    return sum(widths) + 3 * len(widths) + 1


def _print_json(title: str, columns: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
    """One table as one line of JSON: numbers stay numbers, text is redacted like a cell."""
    import json

    def value(cell: object) -> object:
        if cell is None or isinstance(cell, (bool, int, float)):
            return cell
        if isinstance(cell, datetime):
            return _utc(cell).isoformat()
        if isinstance(cell, (dict, list)):
            return redact_obj(cell)  # structured data stays structured (a transcript's event)
        return redact(str(cell))

    body = [dict(zip(columns, (value(c) for c in row), strict=True)) for row in rows]
    sys.stdout.write(json.dumps({"title": redact(title), "rows": body}) + "\n")
    sys.stdout.flush()


def _cell(value: object) -> Text:
    """Cell text is data, never rich markup: ``swarm-reviewer[bot]`` must stay as it is."""
    if isinstance(value, datetime):
        return Text(_utc(value).strftime("%Y-%m-%d %H:%M:%S"))
    return Text("-" if value is None else redact(str(value)))


def _utc(moment: datetime) -> datetime:
    """The store's times are UTC; a backend that hands them back without a zone (SQLite) is
    read as UTC, so a script sees the same ``+00:00`` from either."""
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)


def print_report(report: RunReport, *, link: bool = True) -> None:
    """The run's workers as a table, then the headline and anything that needs attention, and
    (``link``) where the run is in the Prefect UI."""
    if report.outcomes:
        identities = {o.identity_login for o in report.outcomes}
        columns = [c for c in TABLE_COLUMNS if c != "identity" or len(identities) > 1]
        title = f"swarm run {report.run_id}"
        if len(identities) == 1 and None not in identities:
            title += f" as {identities.pop()}"
        rows = []
        for outcome in report.outcomes:
            row = outcome_row(outcome)
            # Links go below the table, whole: a link folded inside a cell cannot be opened.
            row["review"] = review_word(outcome)
            rows.append([row[c] for c in columns])
        styles = [_STATUS_STYLE.get(o.status, "") for o in report.outcomes]
        drop = [c for c in _WORKER_DROP if c in columns]
        print_table(title, columns, rows, wraps=_WORKER_WRAPS, drop=drop, styles=styles)
    for outcome in report.outcomes:
        if outcome.review_url:
            say(f"{report.words.one} {report.words.of} {outcome.target}: {outcome.review_url}")
    for outcome in report.outcomes:
        if outcome.finished_summary:
            # The rest of a review an interrupted run posted: its summary, written now.
            left = f"summary of {outcome.target} (left by an interrupted run)"
            say(f"{left}: {outcome.finished_summary}")
    for outcome in report.outcomes:
        if outcome.dry_run_preview:
            console.print(f"[bold]would post on {escape(outcome.target)}[/bold]:")
            console.print(redact(outcome.dry_run_preview), markup=False, highlight=False)
    style = "green" if report.ok else "red"
    _line(f"[{style}]{escape(report.headline())}.[/{style}]")
    for outcome in report.failed:
        _line(
            f"  [red]{escape(outcome.target)}[/red] ({outcome.role}): "
            + escape(redact(outcome.reason or ""))
        )
    if report.left_by_cost_cap:
        _line(
            f"  [yellow]{len(report.left_by_cost_cap)} PR(s) left[/yellow]: "
            + escape(report.cost_cap_reason or "the run's cost cap")
            + "; the next run retries them: "
            + escape(", ".join(report.left_by_cost_cap))
        )
    for line in report.unreadable:
        # Which PR or repository, and why: the next run tries it again.
        _line(f"  [red]unreadable[/red] {escape(redact(line))}")
    for paused in report.paused:
        until = paused.paused_until.isoformat() if paused.paused_until else "unknown"
        who = escape(paused.identity)
        _line(f"  [yellow]{who}[/yellow] paused by rate limits until {until}")
    for line in report.config_errors:
        _line(f"  [red]{escape(redact(line))}[/red] (repository skipped until fixed)")
    if report.config_told:
        _line(f"  told on {escape(', '.join(report.config_told))} (once per file version)")
    for line in report.skipped:
        _line(f"  skipped {escape(redact(line))}")
    for line in report.refused:
        _line(f"  [yellow]refused[/yellow] {escape(redact(line))}")
    if link and report.ui_link:
        say(f"Prefect UI: {report.ui_link}")


def _line(text: str) -> None:
    """A sentence of the run's report: the terminal wraps it, never rich mid-sentence at a
    captured 80 columns, so a log or a pipe keeps each line whole and searchable."""
    console.print(text, soft_wrap=True)
