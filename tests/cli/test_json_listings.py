"""``--json`` on every listing command: one JSON object a line ({title, rows}) on stdout and
nothing else there, times in ISO 8601 with their zone, costs and counts as numbers, no terminal
styling, and no secret (a transcript's planted token stays redacted)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agents.store import NewDelivery, NewEvent, NewWorker, Store
from flows.cli.app import app

TOKEN = "ghs_" + "x1Y2" * 9
WORKER = "w-json-transcript"
ESC = "\x1b"

# Every listing command, as a person types it.
LISTINGS = [
    ["runs"],
    ["runs", "run-json"],
    ["deliveries"],
    ["transcript", WORKER],
    ["limits"],
    ["audit", "--identity", "swarm-reviewer[bot]"],
    ["memory", "list"],
    ["memory", "notes"],
    ["memory", "review"],
]


@pytest.fixture
def recorded() -> None:
    """A run with a worker whose transcript holds a token, a webhook delivery, a memory and a
    note: something for each listing to list."""
    with Store.open(None, Path(os.environ["SWARM_DATA_DIR"])) as store:
        run_id = store.create_run("manual", run_id="run-json")
        worker = store.create_worker(
            NewWorker(
                run_id,
                worker_id=WORKER,
                role_chain=["reviewer"],
                identity_login="swarm-reviewer[bot]",
                task={"kind": "review_pr", "repo": "acme/widgets", "number": 3},
                status="running",
            )
        )
        store.append_events(
            worker,
            [
                NewEvent("user_turn", "review acme/widgets#3", tokens=5),
                NewEvent("tool_result", {"name": "sh", "output": f"GITHUB_TOKEN={TOKEN}"}),
            ],
        )
        store.finish_worker(worker, "succeeded")
        store.finish_run(run_id, "succeeded", {"workers": 1, "cost_usd": 0.0125})
        store.record_delivery(
            NewDelivery(
                delivery_id="d-json",
                body_sha256="d" * 64,
                event="pull_request",
                action="opened",
                repo="acme/widgets",
                number=3,
                work={"kind": "review", "repo": "acme/widgets", "number": 3},
                claimed_by="here:1:x",
                claimed_until=datetime.now(UTC) + timedelta(minutes=1),
            )
        )
        store.add_memory("fact", "CI runs on 3.11", author="ann", repo="acme/widgets")
        store.add_agent_note(worker, "cache.py is generated", run_id=run_id, repo="acme/widgets")


def _json_lines(*args: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(app, [*args, "--json"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert ESC not in result.stdout
    return [json.loads(line) for line in result.stdout.splitlines()]


def _times(tables: list[dict[str, Any]]) -> list[datetime]:
    """Every value that reads as a date and time, parsed."""
    found = []
    for table in tables:
        for row in table["rows"]:
            for value in row.values():
                if isinstance(value, str) and len(value) >= 19 and value[4] == "-":
                    found.append(datetime.fromisoformat(value))
    return found


@pytest.mark.usefixtures("recorded")
@pytest.mark.parametrize("command", LISTINGS, ids=" ".join)
def test_every_listing_command_prints_only_json_lines_with_zoned_iso_times(
    command: list[str],
) -> None:
    tables = _json_lines(*command)
    assert tables, command
    assert all(set(t) == {"title", "rows"} and isinstance(t["rows"], list) for t in tables)
    assert all(when.tzinfo is not None for when in _times(tables)), tables


@pytest.mark.usefixtures("recorded")
def test_a_transcript_as_json_keeps_each_event_whole_and_its_secrets_redacted() -> None:
    [table] = _json_lines("transcript", WORKER)
    assert table["title"] == f"transcript of {WORKER}"
    first, second = table["rows"]
    assert (first["seq"], first["kind"], first["tokens"]) == (1, "user_turn", 5)
    assert datetime.fromisoformat(first["at"]).utcoffset() == timedelta(0)
    assert second["content"]["name"] == "sh"  # structured, not a string of a dict
    text = json.dumps(table)
    assert TOKEN not in text and TOKEN[:12] not in text and "[REDACTED:" in text


@pytest.mark.usefixtures("recorded")
def test_runs_as_json_give_costs_and_counts_as_numbers() -> None:
    runs, *_ = _json_lines("runs")
    [row] = [r for r in runs["rows"] if r["run"] == "run-json"]
    assert row["cost"] == 0.0125 and row["workers"] == 1
    assert row["new"] is None  # not recorded: null, not a dash
    assert datetime.fromisoformat(row["started"]).tzinfo is not None


def test_an_empty_listing_is_an_empty_table_for_a_script_and_a_sentence_for_a_person() -> None:
    Store.open(None, Path(os.environ["SWARM_DATA_DIR"])).close()
    for command in (["deliveries"], ["memory", "list"], ["memory", "notes"]):
        [table] = _json_lines(*command)
        assert table["rows"] == [], command
        said = CliRunner().invoke(app, command, terminal_width=200)
        assert said.exit_code == 0 and said.stdout.startswith("no "), said.output
