"""Read-back and upkeep commands over the shared store: runs, transcripts, limits, audit, prune."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from flows.cli.options import JSON_OUTPUT

if TYPE_CHECKING:
    from agents.store import Store
    from agents.store.copy import StoreLocation
    from agents.store.records import RunRecord

_DURATION = re.compile(r"^\s*(\d+)\s*([a-z]+)\s*$")
# Units that cannot be misread: a bare "m" (minutes or months?) is refused, "min" is minutes.
_UNITS = {"s": "seconds", "min": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_duration(text: str, what: str) -> timedelta:
    """``30d``, ``12h``, ``90min``: a clear error names the option when it is none of those."""
    from agents.settings.model import ConfigError

    match = _DURATION.match(text.lower())
    if match and match.group(2) == "m":
        raise ConfigError(
            f"{what}: {text!r} is ambiguous (minutes or months?): write "
            f"{match.group(1)}min for minutes or {match.group(1)}d for days"
        )
    if not match or match.group(2) not in _UNITS:
        raise ConfigError(f"{what}: {text!r} is not a duration like 30d, 12h or 90min")
    return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})


def parse_since(text: str) -> datetime:
    """A duration back from now (``24h``) or an ISO date/time (UTC when no zone is given)."""
    from agents.settings.model import ConfigError

    if _DURATION.match(text):
        return datetime.now(UTC) - parse_duration(text, "--since")
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(
            f"--since: {text!r} is neither a duration (24h, 7d) nor an ISO date/time"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


@contextmanager
def open_store(*, create: bool = False) -> Iterator[Store]:
    """The configured store. The default SQLite store (``.swarm/`` in the working directory) is
    made only when ``create`` (adding a memory): typed outside the project's root, a command
    that reads would otherwise leave an empty ``.swarm/`` there and answer "nothing yet". A
    SWARM_DATA_DIR or SWARM_STORE_URL someone set is theirs to start empty."""
    from agents.store import Store

    location = configured_store(create=create)
    store = Store.open(location.url, location.data_dir)
    try:
        yield store
    finally:
        store.close()


def configured_store(*, create: bool = False) -> StoreLocation:
    """Where the configured store is (``open_store`` says when it is made)."""
    from agents.settings.model import ConfigError, load_settings
    from agents.store.copy import StoreLocation

    settings = load_settings()
    chosen = {"store_url", "data_dir"} & settings.model_fields_set
    # Only a missing folder: one that is there is judged by Store.open (another user's is
    # refused as such).
    if not chosen and not create and not settings.data_dir.exists():
        raise ConfigError(
            f"no swarm store in {settings.data_dir.resolve()}: run swarm from the project's root "
            "(where `swarm demo` or `swarm run` made it), or set SWARM_DATA_DIR"
        )
    setting = "SWARM_STORE_URL" if settings.store_url else "SWARM_DATA_DIR"
    return StoreLocation(settings.store_url, settings.data_dir, setting)


def when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value else "-"


# How many recent run ids a mistyped one is compared with for a "did you mean".
_RECENT_RUNS = 200


def resolve_run(store: Store, typed: str) -> RunRecord:
    """The run ``typed`` names: its whole id, or the start of one (with or without ``run-``),
    as long as no other run's id starts the same. Anything else is one line to fix."""
    from agents.permissions import did_you_mean
    from agents.settings.model import ConfigError
    from agents.store import UnknownRunError

    text = typed.strip()
    try:
        return store.get_run(text)
    except UnknownRunError:
        pass
    found = store.runs_starting(text, limit=5) if text else []
    if not found and text and not text.startswith("run-"):
        found = store.runs_starting(f"run-{text}", limit=5)
    if len(found) == 1:
        return found[0]
    if found:
        ids = ", ".join(r.id for r in found)
        raise ConfigError(f"run {typed!r} is ambiguous: it starts {ids}; type more of the id")
    recent = {r.id for r in store.list_runs(limit=_RECENT_RUNS)}
    hint = did_you_mean(text, recent)
    raise ConfigError(f"no run {typed!r}{hint}; `swarm runs` lists the runs")


def show_runs(limit: int, *, run_id: str | None = None) -> None:
    """Recent runs, then the workers of ``run_id`` (default: the latest run with workers), and
    every item that run skipped or left, with its reason."""
    from flows.cli.console import print_table, say

    with open_store() as store:
        records = store.list_runs(limit=limit)
        chosen = resolve_run(store, run_id) if run_id is not None else None
        shown = chosen.id if chosen else None
        workers = store.list_workers(run_id=shown) if shown else []
        # Without an id: the latest run that had workers (a re-run that skipped all has none).
        for run in records if run_id is None else []:
            chosen, shown, workers = run, run.id, store.list_workers(run_id=run.id)
            if workers:
                break
        posted = store.posted_by([w.id for w in workers])
    # One run asked for: its own row first (role, repositories, cost, why it ended early).
    listed = [chosen] if run_id is not None and chosen is not None else records
    rows = [_run_row(run) for run in listed]
    print_table("swarm runs", RUN_COLUMNS, rows, wraps=RUN_WRAPS, drop=RUN_DROP)
    if shown is None:
        say("no runs yet; `swarm demo` or `swarm run` makes one")
        return
    # What each worker wrote (a review, a draft pull request): a data column under --json; on a
    # terminal a line each below the table, so a link is never cut to fit a column.
    columns = ["worker", "roles", "identity", "task", "status", "reason"]
    columns += ["wrote"] if JSON_OUTPUT.on else []
    print_table(
        f"workers of {shown}",
        columns,
        (
            [
                w.id,
                " > ".join(w.role_chain),
                w.identity_login,
                task_label(w.task),
                w.status,
                w.blocked_reason,
                *([" ".join(posted.get(w.id, [])) or None] if JSON_OUTPUT.on else []),
            ]
            for w in workers
        ),
        wraps={"roles", "task", "reason"},
        drop=["identity", "roles"],
    )
    for w in workers if not JSON_OUTPUT.on else []:
        for url in posted.get(w.id, []):
            say(f"{task_label(w.task)} ({w.id}) wrote {url}")
    left = left_rows(chosen.totals if chosen else {})
    if left or JSON_OUTPUT.on:  # under --json always: a script reads the same three lines
        print_table(f"skipped or left by {shown}", ["item", "reason"], left, wraps={"reason"})


def left_rows(totals: dict[str, Any]) -> list[list[str]]:
    """Every item a run's report says it skipped or left, and why: already done at its head,
    a draft, the repository's configuration, a refusal, the cost cap, unreadable, not open."""
    report = totals.get("report") or {}

    def split(lines: list[str], why: str | None = None) -> list[list[str]]:
        # Each report line is "item: reason" (an item's label holds no ": ").
        rows = []
        for line in lines:
            item, _, reason = str(line).partition(": ")
            rows.append([item, f"{why}: {reason}" if why and reason else why or reason])
        return rows

    cap = report.get("cost_cap_reason") or "the run's cost cap"
    return [
        *split(report.get("left_alone") or []),
        *split(report.get("skipped") or [], ".github/swarm.yaml"),
        *split(report.get("config_errors") or [], "invalid .github/swarm.yaml"),
        *split(report.get("refused") or [], "refused"),
        *split(report.get("notes") or [], "noted as not reviewed in full"),
        *split(report.get("unreadable") or [], "could not be read"),
        *[[label, "not open"] for label in report.get("not_open") or []],
        *[
            [label, f"left by the cost cap: {cap}"]
            for label in report.get("left_by_cost_cap") or []
        ],
    ]


def show_deliveries(limit: int) -> None:
    """Webhook deliveries, the unfinished first: ``lost`` when no live receiver holds the work
    (the next receiver to start, or a Redeliver, runs it), else who holds it or what it became."""
    from flows.cli.console import print_table

    with open_store() as store:
        records = store.list_deliveries(limit=limit)
    now = datetime.now(UTC)
    rows = (_delivery_row(d, now) for d in records)
    print_table(
        "webhook deliveries",
        DELIVERY_COLUMNS,
        rows,
        wraps={"target", "outcome", "detail"},
        drop=["flow run", "state", "tries", "event", "received"],
        empty="no webhook deliveries yet; `swarm webhook serve` records them",
    )


DELIVERY_COLUMNS = [
    "delivery",
    "received",
    "event",
    "target",
    "outcome",
    "flow run",
    "state",
    "tries",
    "detail",
]


def _delivery_row(d: Any, now: datetime) -> list[object]:
    from agents.store.deliveries import UNFINISHED

    outcome = d.outcome
    if outcome in UNFINISHED:
        if d.claimed_until is None:
            outcome += " (Prefect holds it)" if d.flow_run_id else " (nobody holds it)"
        elif d.claimed_until < now:
            outcome = f"LOST ({outcome})"
        else:
            outcome += f" by {d.claimed_by}"
    event = d.event + (f".{d.action}" if d.action else "")
    target = f"{d.repo}#{d.number}" if d.repo and d.number else d.repo
    return [
        d.delivery_id,
        d.received_at,
        event,
        target,
        outcome,
        d.flow_run_id,
        d.flow_state,
        d.attempts,
        d.detail,
    ]


# What goes first when a terminal is too narrow, and the free text that wraps.
# The columns an 80-column terminal loses first: the ones `swarm runs RUN` and --wide tell too.
RUN_DROP = ["repos", "trigger", "finished", "cost", "role", "skipped", "workers", "new", "failed"]
RUN_WRAPS = frozenset({"status", "note", "repos"})
RUN_COLUMNS = [
    "run",
    "role",
    "trigger",
    "status",
    "started",
    "finished",
    "repos",
    "workers",
    "new",
    "skipped",
    "failed",
    "cost",
    "note",
]


def _run_row(run: Any) -> list[object]:
    from flows.cli.console import Usd

    totals = run.totals or {}
    counts = [totals.get(k) for k in ("workers", "new_reviews", "already_reviewed", "failed")]
    status, note = run.status, totals.get("error")
    not_open = (totals.get("report") or {}).get("not_open")
    if not note and not_open:
        note = f"not open: {', '.join(not_open)}"
    if totals.get("dry_run"):
        # Nothing a dry run "would post" is new on GitHub.
        status, note = f"{status} (dry run)", f"{counts[1] or 0} would be posted"
        counts[1] = 0
    report, asked = totals.get("report") or {}, totals.get("asked") or {}
    if not note and asked.get("retry_of"):
        note = f"retry of {asked['retry_of']}"
    repos = ", ".join(report.get("repos") or []) or "-"
    cost = totals.get("cost_usd")
    spent = Usd(cost) if isinstance(cost, (int, float)) else None
    return [
        run.id,
        report.get("role") or asked.get("role") or "-",
        run.trigger,
        status,
        run.started_at,
        run.finished_at,
        repos,
        *counts,
        spent,
        note,
    ]


def task_label(task: Mapping[str, object]) -> str:
    from agents.work import Task

    try:  # older rows hold more fields: read only the label's
        return Task.model_validate({k: task.get(k) for k in Task.label_fields}).part_label
    except ValueError:
        return str(task)


def show_transcript(worker: str, *, full: bool) -> None:
    """The worker's transcript as a person reads it, or (``--json``) its events as one table:
    each event's fields as the store holds them (redacted when written), its payload whole."""
    from agents.settings.model import ConfigError
    from agents.store import UnknownWorkerError, render_transcript
    from flows.cli.console import console, print_table

    with open_store() as store:
        try:
            store.get_worker(worker)
        except UnknownWorkerError:
            raise ConfigError(f"no worker {worker!r} in the store; see `swarm runs`") from None
        if not JSON_OUTPUT.on:
            console.print(render_transcript(store, worker, compact_tools=not full), markup=False)
            return
        events = store.get_transcript(worker)
    print_table(
        f"transcript of {worker}",
        ["seq", "at", "kind", "content", "tokens", "cost"],
        ([e.seq, e.created_at, e.kind, e.content, e.tokens, e.cost] for e in events),
    )


def show_limits() -> None:
    """The latest recorded snapshot per identity and resource."""
    from flows.cli.console import print_table

    with open_store() as store:
        rows = [
            [
                r.identity,
                r.resource,
                r.limit,
                r.remaining,
                r.reset_at,
                r.paused_until,
                r.at,
            ]
            for r in store.latest_rate_limits()
        ]
    print_table(
        "rate-limit buckets (latest snapshot)",
        ["identity", "resource", "limit", "remaining", "reset", "paused until", "taken"],
        rows,
        drop=["taken", "limit", "reset"],
        empty="no rate-limit snapshots recorded yet; run a swarm first",
    )


def show_audit(identity: str, since: str | None) -> None:
    from agents.settings.model import load_settings
    from flows.cli.console import print_table
    from flows.cli.known import check_identity

    after = parse_since(since) if since else None
    with open_store() as store:
        check_identity(identity, store, load_settings())
        records = store.audit(identity=identity, since=after)
    print_table(
        f"writes by {identity}",
        ["at", "worker", "method", "route", "target", "status", "remaining"],
        (
            [
                r.at,
                r.worker_id,
                r.method,
                r.route,
                r.target,
                r.status,
                r.ratelimit_remaining,
            ]
            for r in records
        ),
        wraps={"route", "target"},
        drop=["remaining", "status", "method"],
        empty=f"no recorded writes by {identity}",
    )


def prune(older_than: str, *, yes: bool) -> None:
    """Without ``yes``, only what would go: deleting is for a second, deliberate command."""
    from flows.cli.console import say

    age = parse_duration(older_than, "--older-than")
    with open_store() as store:
        counts = store.prune(age, dry_run=not yes)
    what = (
        f"{counts.transcript_events} transcript events, {counts.llm_calls} LLM calls, "
        f"{counts.github_calls} GitHub calls, {counts.rate_limit_snapshots} rate-limit snapshots"
    )
    records = f"{counts.total} record(s) older than {older_than.strip()}: {what}"
    if yes:
        say(f"pruned {records}; user-visible memory kept")
    else:
        say(f"would prune {records}; nothing deleted: add --yes to delete them")


def copy(to: str, from_url: str | None, *, dry_run: bool) -> None:
    """``swarm store copy``: the rows per table, then one line saying what was done."""
    from agents.store.copy import StoreLocation, copy_store
    from flows.cli.console import print_table, say

    source = configured_store()
    if from_url is not None:
        source = StoreLocation(from_url, source.data_dir, "--from")
    target = StoreLocation(to, source.data_dir, "--to")
    result = copy_store(source, target, dry_run=dry_run)
    print_table("rows per table", ["table", "rows"], result.tables)
    rows = f"{result.rows} row(s) in {len(result.tables)} tables"
    rows += f" from {result.source} to {result.target}"
    if dry_run:
        say(f"would copy {rows}; nothing written: drop --dry-run to copy")
    else:
        say(f"copied {rows}; set SWARM_STORE_URL to the new store's URL to use it from now on")
