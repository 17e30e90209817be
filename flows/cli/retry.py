"""``swarm run --retry RUN``: what a run's failed workers left undone, asked again as a new run.

The new run names the failed workers' pull requests (or issues) as its targets and runs them as
the first run's role, overlay and focus, through discovery like any run: an item another run
finished meanwhile is found done at its head and skipped, and each write keeps its one key, so
nothing is done twice. Workers that succeeded, skipped (already done, held by another run) or
waited on a paused identity are not retried: only the ends that failed the run are
(``agents.outcome.FAILED_OUTCOMES``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flows.cli.options import DEFAULT_ROLE

if TYPE_CHECKING:
    from agents.store.records import WorkerRecord
    from flows.run.request import RunRequest


def retry_request(flags: RunRequest, typed: str) -> RunRequest | None:
    """``flags`` narrowed to the failed work of run ``typed`` (an id or the start of one), or
    None when none of its workers failed (a line says so). Flags that choose the work
    themselves (``--pr``, ``--repo``, ``--force``, another ``--role``) are refused: the run
    says what to do again."""
    from agents.outcome import FAILED_OUTCOMES
    from agents.settings.model import ConfigError
    from flows.cli.console import say
    from flows.cli.store_actions import open_store, resolve_run

    given = [name for name, on in _choosers(flags) if on]
    if given:
        raise ConfigError(f"--retry: the run says what to do again; drop {', '.join(given)}")
    with open_store() as store:
        run = resolve_run(store, typed)
        failed = [w for w in store.list_workers(run_id=run.id) if w.status in FAILED_OUTCOMES]
    totals = run.totals or {}
    report, asked_again = totals.get("report"), totals.get("asked")
    asked = {
        **(report if isinstance(report, dict) else {}),
        **(asked_again if isinstance(asked_again, dict) else {}),
    }
    role = asked.get("role")
    if flags.role != DEFAULT_ROLE and role is not None and flags.role != role:
        raise ConfigError(f"--retry: run {run.id} ran as {role!r}, not {flags.role!r}")
    targets = list(dict.fromkeys(t for t in map(_target, failed) if t))
    if not targets:
        say(f"run {run.id}: no worker failed; nothing to retry")
        return None
    if not isinstance(role, str):
        raise ConfigError(f"--retry: run {run.id} did not record its role; use --pr and --role")
    say(f"retrying the failed work of run {run.id}: {', '.join(targets)}")
    return flags.model_copy(
        update={
            "role": role,
            "targets": tuple(targets),
            "overlay": flags.overlay or asked.get("overlay"),
            "focus": asked.get("focus"),
            "dry_run": flags.dry_run or bool(asked.get("dry_run")),
            "retry_of": run.id,
        }
    )


def _choosers(flags: RunRequest) -> list[tuple[str, bool]]:
    return [("--pr", bool(flags.targets)), ("--repo", bool(flags.repos)), ("--force", flags.force)]


def _target(worker: WorkerRecord) -> str | None:
    """``OWNER/NAME#N`` of the item a worker worked on (None for a repository-wide task)."""
    repo, number = worker.task.get("repo"), worker.task.get("number")
    return f"{repo}#{number}" if isinstance(repo, str) and isinstance(number, int) else None
