"""Every table the CLI prints fits the terminal it prints on: a real pty 80 or 120 columns wide,
or COLUMNS when the output is captured. Ids, costs and times stay whole on one line; a column
that does not fit is left out by name (``--wide`` shows it), never squeezed to nothing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len

from agents.store import NewWorker, Store
from flows.cli.store_actions import RUN_COLUMNS
from tests.pty_terminal import run_in_terminal

SWARM = str(Path(sys.executable).with_name("swarm"))
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")
LONG_REASON = "the run failed: TokenRefused: GitHub refused a token for acme/widgets " * 2
# A reason holding a link: one word longer than what an 80-column table has left for it.
LINKED_REASON = "summary http://127.0.0.1:8765/acme/widgets/pull/2#issuecomment-100024"


def _seed(data_dir: Path) -> tuple[list[str], list[str]]:
    """Runs with long notes and a dry run, and workers with long reasons."""
    with Store.open(None, data_dir) as store:
        runs = []
        for n in range(3):
            run_id = store.create_run("manual")
            totals = {"workers": 12, "new_reviews": 10, "already_reviewed": 1, "failed": 1}
            store.finish_run(run_id, "partial", {**totals, "error": LONG_REASON, "dry_run": n == 1})
            runs.append(run_id)
        workers = []
        for status in ("succeeded", "failed", "blocked"):
            task = {
                "kind": "review_pr",
                "repo": "acme/widgets",
                "number": 12,
                "head_sha": "00803e8" * 5,
            }
            worker = store.create_worker(
                NewWorker(
                    runs[-1], role_chain=["reviewer", "security"], task=task, status="running"
                )
            )
            reason = LINKED_REASON if status == "succeeded" else LONG_REASON
            store.finish_worker(worker, status, blocked_reason=reason)
            workers.append(worker)
    return runs, workers


def _table_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.strip()[:1] in set("┏┃┡│└━")]


def _headers(output: str) -> list[str]:
    """The header cells of every table printed (rows starting with ┃)."""
    rows = [line for line in output.splitlines() if line.startswith("┃")]
    return [cell.strip() for row in rows for cell in row.strip("┃").split("┃")]


def _fits(output: str, columns: int, ids: list[str]) -> None:
    lines = _table_lines(output)
    assert lines, output
    assert max(cell_len(line) for line in lines) <= columns, output
    # Whole tables, not cropped at the terminal's edge: every line ends with its border.
    assert all(line.rstrip()[-1] in "┓┃┩│┘" for line in lines), output
    for whole in ids:
        assert whole in output, (whole, output)
    assert "…" not in output, output


@pytest.mark.parametrize("columns", [80, 120])
def test_runs_and_their_workers_fit_a_real_terminal_whole(columns: int, tmp_path: Path) -> None:
    runs, workers = _seed(Path(os.environ["SWARM_DATA_DIR"]))
    code, output = run_in_terminal([SWARM, "runs"], columns=columns, env=os.environ, cwd=tmp_path)
    assert code == 0, output
    _fits(output, columns, runs + workers)
    # One whole timestamp per run, never split over lines.
    assert len(TIMESTAMP.findall(output)) >= len(runs), output
    shown = _headers(output)
    assert "" not in shown, output  # no column squeezed to nothing
    left_out = re.findall(r"^\(left out to fit \d+ columns, .*?: ([^)]*)\)", output, re.M | re.S)
    hidden = {" ".join(c.split()) for note in left_out for c in note.split(",")}
    # The note fits the terminal too, wrapped between words.
    assert all(cell_len(line) <= columns for line in output.splitlines()), output
    assert set(RUN_COLUMNS) <= set(shown) | hidden, output
    if columns == 80:
        assert hidden, output


def test_wide_shows_every_column(tmp_path: Path) -> None:
    _seed(Path(os.environ["SWARM_DATA_DIR"]))
    code, output = run_in_terminal(
        [SWARM, "--wide", "runs"], columns=80, env=os.environ, cwd=tmp_path
    )
    assert code == 0, output
    assert set(RUN_COLUMNS) <= set(_headers(output)), output
    assert "left out" not in output, output


def test_captured_output_follows_columns(tmp_path: Path) -> None:
    runs, workers = _seed(Path(os.environ["SWARM_DATA_DIR"]))
    shown = subprocess.run(
        [SWARM, "runs"],
        env={**os.environ, "COLUMNS": "80"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    _fits(shown.stdout, 80, runs + workers)
