"""Read-back and upkeep commands over the shared store, plus ``swarm roles check``."""

from __future__ import annotations

import getpass
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agents.store import Store

_DURATION = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_duration(text: str, what: str) -> timedelta:
    """``30d``, ``12h``, ``45m``: a clear error names the option when it is none of those."""
    from agents.config import ConfigError

    match = _DURATION.match(text)
    if not match:
        raise ConfigError(f"{what}: {text!r} is not a duration like 30d, 12h or 45m")
    return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})


def parse_since(text: str) -> datetime:
    """A duration back from now (``24h``) or an ISO date/time (UTC when no zone is given)."""
    from agents.config import ConfigError

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
def open_store() -> Iterator[Store]:
    from agents.config import load_settings
    from agents.store import Store

    settings = load_settings()
    store = Store.open(settings.store_url, settings.data_dir)
    try:
        yield store
    finally:
        store.close()


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value else "-"


def show_runs(limit: int) -> None:
    from flows.console import console, table

    with open_store() as store:
        records = store.list_runs(limit=limit)
        rows = []
        for run in records:
            totals = run.totals or {}
            rows.append(
                [
                    run.id,
                    run.trigger,
                    run.status,
                    _when(run.started_at),
                    _when(run.finished_at),
                    totals.get("workers", "-"),
                    totals.get("new_reviews", "-"),
                    totals.get("already_reviewed", "-"),
                    totals.get("failed", "-"),
                ]
            )
        workers = store.list_workers(run_id=records[0].id) if records else []
    columns = ["run", "trigger", "status", "started", "finished", "workers", "new", "skipped"]
    console.print(table("swarm runs", [*columns, "failed"], rows))
    if workers:
        console.print(
            table(
                f"workers of {records[0].id}",
                ["worker", "roles", "identity", "task", "status", "reason"],
                (
                    [
                        w.id,
                        " > ".join(w.role_chain),
                        w.identity_login,
                        _task_label(w.task),
                        w.status,
                        w.blocked_reason,
                    ]
                    for w in workers
                ),
            )
        )


def _task_label(task: dict[str, object]) -> str:
    repo, number, sha = task.get("repo"), task.get("number"), str(task.get("head_sha") or "")
    return f"{repo}#{number} @{sha[:7]}" if repo else str(task)


def show_transcript(worker: str, *, full: bool) -> None:
    from agents.config import ConfigError
    from agents.store import UnknownWorkerError, render_transcript
    from flows.console import console

    with open_store() as store:
        try:
            store.get_worker(worker)
        except UnknownWorkerError:
            raise ConfigError(f"no worker {worker!r} in the store; see `swarm runs`") from None
        console.print(render_transcript(store, worker, compact_tools=not full), markup=False)


def show_limits() -> None:
    """The latest recorded snapshot per identity and resource."""
    import sqlalchemy as sa

    from agents.store.schema import rate_limit_snapshots as t
    from flows.console import console, table

    with open_store() as store:
        latest = (
            sa.select(t.c.identity, t.c.resource, sa.func.max(t.c.id).label("id"))
            .group_by(t.c.identity, t.c.resource)
            .subquery()
        )
        query = sa.select(t).join(latest, t.c.id == latest.c.id).order_by(t.c.identity)
        with store._db.read() as conn:
            rows = [
                [
                    r.identity,
                    r.resource,
                    r.limit,
                    r.remaining,
                    _when(r.reset_at),
                    _when(r.paused_until),
                    _when(r.at),
                ]
                for r in conn.execute(query)
            ]
    if not rows:
        console.print("no rate-limit snapshots recorded yet; run a swarm first")
        return
    console.print(
        table(
            "rate-limit buckets (latest snapshot)",
            ["identity", "resource", "limit", "remaining", "reset", "paused until", "taken"],
            rows,
        )
    )


def show_audit(identity: str, since: str | None) -> None:
    from flows.console import console, table

    after = parse_since(since) if since else None
    with open_store() as store:
        records = store.audit(identity=identity, since=after)
    if not records:
        console.print(f"no recorded writes by {identity}", markup=False)
        return
    console.print(
        table(
            f"writes by {identity}",
            ["at", "worker", "method", "route", "target", "status", "remaining"],
            (
                [
                    _when(r.at),
                    r.worker_id,
                    r.method,
                    r.route,
                    r.target,
                    r.status,
                    r.ratelimit_remaining,
                ]
                for r in records
            ),
        )
    )


def _person() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no login name in some containers
        return "cli"


def memory_list(*, repo: str | None, role: str | None, include_inactive: bool) -> None:
    from flows.console import console, table

    with open_store() as store:
        records = store.list_memories(repo=repo, role=role, include_inactive=include_inactive)
    if not records:
        console.print('no memories yet; add one with `swarm memory add "..." --repo OWNER/NAME`')
        return
    console.print(
        table(
            "memories",
            ["id", "kind", "repo", "role", "body", "by", "when", "state"],
            (
                [
                    m.id,
                    m.kind,
                    m.repo or "(all)",
                    m.role or "(all)",
                    m.body,
                    f"{m.author} ({m.author_kind})",
                    _when(m.created_at),
                    _state(m),
                ]
                for m in records
            ),
        )
    )


def _state(memory: object) -> str:
    if getattr(memory, "deleted_at", None):
        return "deleted"
    superseded = getattr(memory, "superseded_by", None)
    return f"superseded by {superseded}" if superseded else "active"


def memory_add(*, body: str, repo: str | None, role: str | None, kind: str) -> None:
    from flows.console import console

    with open_store() as store:
        record = store.add_memory(kind, body, author=_person(), repo=repo, role=role)
    console.print(f"added memory {record.id}")


def memory_edit(memory_id: int, body: str) -> None:
    from flows.console import console

    with open_store() as store:
        record = store.supersede_memory(memory_id, body, author=_person())
    console.print(f"memory {memory_id} superseded by {record.id}")


def memory_rm(memory_id: int) -> None:
    from flows.console import console

    with open_store() as store:
        store.delete_memory(memory_id, by=_person())
    console.print(f"deleted memory {memory_id}")


def prune(older_than: str) -> None:
    from flows.console import console

    age = parse_duration(older_than, "--older-than")
    with open_store() as store:
        counts = store.prune(age)
    console.print(
        f"pruned {counts.total} record(s) older than {older_than}: "
        f"{counts.transcript_events} transcript events, {counts.llm_calls} LLM calls, "
        f"{counts.github_calls} GitHub calls, {counts.rate_limit_snapshots} rate-limit snapshots; "
        "user-visible memory kept"
    )


def check_roles(directory: Path | None) -> None:
    from agents.config import load_settings
    from agents.roles import load_roles
    from flows.console import console, table

    folder = directory or load_settings().roles_dir
    roles = load_roles(folder)
    console.print(
        table(
            f"{len(roles)} role(s) in {folder}: all valid",
            ["role", "identity", "permissions", "tools", "model", "limits"],
            (
                [
                    r.id,
                    r.identity,
                    ", ".join(f"{k}:{v}" for k, v in sorted(r.permissions.items())),
                    ", ".join(r.tools),
                    r.model or "(SWARM_MODEL)",
                    f"{r.limits.max_turns} turns, ${r.limits.max_cost_usd:g}",
                ]
                for r in sorted(roles.values(), key=lambda r: r.id)
            ),
        )
    )
