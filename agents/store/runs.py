"""Swarm runs and their workers: lifecycle, heartbeats and crash recovery."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Literal

import sqlalchemy as sa

from agents.processes import pid_alive
from agents.store.base import (
    StoreBase,
    StoreError,
    UnknownRunError,
    UnknownWorkerError,
    check_choice,
    check_id,
    clean,
    clean_json,
    utcnow,
)
from agents.store.records import (
    RUN_STATUSES,
    WORKER_STATUSES,
    NewWorker,
    RunRecord,
    WorkerRecord,
    WorkerUpdate,
)
from agents.store.schema import review_keys, swarm_runs, workers

# What a worker interrupted after its write left undone, in the words its record and the
# interrupted run's report use.
LEFT_AFTER_WRITE = "what follows it (the summary) is left for the next run"


class RunsMixin(StoreBase):
    def create_run(
        self,
        trigger: str,
        *,
        prefect_flow_run_id: str | None = None,
        run_id: str | None = None,
        totals: Mapping[str, object] | None = None,
    ) -> str:
        run_id = check_id(run_id, "run id") if run_id else f"run-{uuid.uuid4().hex[:16]}"
        self._insert(
            swarm_runs,
            {
                "id": run_id,
                "trigger": clean(trigger),
                "prefect_flow_run_id": clean(prefect_flow_run_id),
                "status": "running",
                "started_at": utcnow(),
                "totals": clean_json(dict(totals or {})),
            },
        )
        return run_id

    def finish_run(
        self, run_id: str, status: str, totals: Mapping[str, object] | None = None
    ) -> None:
        check_choice(status, RUN_STATUSES, "run status")
        values: dict[str, object] = {"status": status, "finished_at": utcnow()}
        if totals is not None:
            values["totals"] = clean_json(dict(totals))
        if self._update(swarm_runs, swarm_runs.c.id == run_id, values) == 0:
            raise UnknownRunError(f"no run with id {run_id!r}")

    def set_run_waiting(self, run_id: str, waiting: bool) -> None:
        """The run's flow run is suspended for a person's decision (``waiting``), or resumed
        and running again: it is neither finished nor holding a process while it waits."""
        values: dict[str, object] = {"status": "waiting" if waiting else "running"}
        values["finished_at"] = None
        if self._update(swarm_runs, swarm_runs.c.id == run_id, values) == 0:
            raise UnknownRunError(f"no run with id {run_id!r}")

    def get_run(self, run_id: str) -> RunRecord:
        query = sa.select(swarm_runs).where(swarm_runs.c.id == run_id)
        return self._one(RunRecord, query, UnknownRunError(f"no run with id {run_id!r}"))

    def run_for_flow_run(self, prefect_flow_run_id: str) -> RunRecord | None:
        """The store's run of one Prefect flow run (a child run on another machine, say)."""
        query = (
            sa.select(swarm_runs)
            .where(swarm_runs.c.prefect_flow_run_id == prefect_flow_run_id)
            .order_by(swarm_runs.c.started_at.desc())
            .limit(1)
        )
        found = self._all(RunRecord, query)
        return found[0] if found else None

    def list_runs(self, limit: int = 50, status: str | None = None) -> list[RunRecord]:
        query = sa.select(swarm_runs).order_by(swarm_runs.c.started_at.desc(), swarm_runs.c.id)
        if status is not None:
            query = query.where(swarm_runs.c.status == status)
        return self._all(RunRecord, query.limit(limit))

    def runs_starting(self, prefix: str, limit: int = 2) -> list[RunRecord]:
        """Runs whose id starts with ``prefix``, newest first: a person types the start of an
        id ``swarm runs`` shows. (Escaped: ``_`` in an id is a LIKE wildcard.)"""
        query = (
            sa.select(swarm_runs)
            .where(swarm_runs.c.id.startswith(prefix, autoescape=True))
            .order_by(swarm_runs.c.started_at.desc(), swarm_runs.c.id)
        )
        return self._all(RunRecord, query.limit(limit))

    def create_worker(self, new: NewWorker) -> str:
        run_id = new.run_id
        worker_id = (
            check_id(new.worker_id, "worker id") if new.worker_id else f"w-{uuid.uuid4().hex[:16]}"
        )
        status = new.status
        check_choice(status, WORKER_STATUSES, "worker status")
        now = utcnow()
        with self._db.write() as conn:
            if (
                conn.execute(sa.select(swarm_runs.c.id).where(swarm_runs.c.id == run_id)).first()
                is None
            ):
                raise UnknownRunError(f"no run with id {run_id!r}")
            conn.execute(
                sa.insert(workers).values(
                    id=worker_id,
                    run_id=run_id,
                    role_chain=clean_json(list(new.role_chain)),
                    identity_login=clean(new.identity_login),
                    envelope_id=clean(new.envelope_id),
                    envelope_hash=clean(new.envelope_hash),
                    token_fingerprint=clean(new.token_fingerprint),
                    task=clean_json(dict(new.task or {})),
                    status=status,
                    budgets_used={},
                    last_seq=0,
                    heartbeat_at=now if status == "running" else None,
                    pid=new.pid if new.pid is not None else os.getpid(),
                    host=new.host if new.host is not None else socket.gethostname(),
                    started_at=now,
                )
            )
        return worker_id

    def update_worker(
        self, worker_id: str, change: WorkerUpdate, *, heartbeat: bool = True
    ) -> None:
        values: dict[str, object] = {}
        if change.status is not None:
            values["status"] = check_choice(change.status, WORKER_STATUSES, "worker status")
        if change.blocked_reason is not None:
            values["blocked_reason"] = clean(change.blocked_reason)
        if change.budgets_used is not None:
            values["budgets_used"] = clean_json(dict(change.budgets_used))
        if change.identity_login is not None:
            values["identity_login"] = clean(change.identity_login)
        if change.token_fingerprint is not None:
            values["token_fingerprint"] = clean(change.token_fingerprint)
        if change.pid is not None:
            values["pid"] = change.pid
        if change.host is not None:
            values["host"] = change.host
        if heartbeat:
            values["heartbeat_at"] = utcnow()
        if values:
            self._update_worker(worker_id, values)

    def heartbeat(self, worker_id: str) -> None:
        self._update_worker(worker_id, {"heartbeat_at": utcnow()})

    def finish_worker(
        self,
        worker_id: str,
        status: str,
        *,
        blocked_reason: str | None = None,
        budgets_used: Mapping[str, int | float | str] | None = None,
    ) -> None:
        check_choice(status, WORKER_STATUSES, "worker status")
        if status in ("pending", "running"):
            raise StoreError(f"finish_worker needs a final status, not {status!r}")
        values: dict[str, object] = {"status": status, "finished_at": utcnow()}
        if blocked_reason is not None:
            values["blocked_reason"] = clean(blocked_reason)
        if budgets_used is not None:
            values["budgets_used"] = clean_json(dict(budgets_used))
        self._update_worker(worker_id, values)

    def _update_worker(self, worker_id: str, values: dict[str, object]) -> None:
        if self._update(workers, workers.c.id == worker_id, values) == 0:
            raise UnknownWorkerError(f"no worker with id {worker_id!r}")

    def get_worker(self, worker_id: str) -> WorkerRecord:
        query = sa.select(workers).where(workers.c.id == worker_id)
        return self._one(
            WorkerRecord, query, UnknownWorkerError(f"no worker with id {worker_id!r}")
        )

    def list_workers(
        self, run_id: str | None = None, status: str | None = None
    ) -> list[WorkerRecord]:
        query = sa.select(workers).order_by(workers.c.started_at, workers.c.id)
        if run_id is not None:
            query = query.where(workers.c.run_id == run_id)
        if status is not None:
            query = query.where(workers.c.status == status)
        return self._all(WorkerRecord, query)

    def mark_stale_workers_failed(
        self, older_than: timedelta, *, now: datetime | None = None
    ) -> list[str]:
        """Fail workers left "running" by a crash: their process on this host is gone, or
        their last heartbeat (or start) is older than ``older_than``. Returns their ids."""
        now = now or utcnow()
        cutoff = now - older_than
        here = socket.gethostname()
        stale: dict[str, str] = {}
        for w in self.list_workers(status="running"):
            last = w.heartbeat_at or w.started_at
            if w.host == here and w.pid is not None and not pid_alive(w.pid):
                stale[w.id] = f"stale: process {w.pid} on {here} is gone"
            elif last < cutoff:
                stale[w.id] = f"stale: no heartbeat since {last.isoformat()}"
        failed: list[str] = []
        for worker_id, reason in stale.items():
            still_running = sa.and_(workers.c.id == worker_id, workers.c.status == "running")
            values = {"status": "failed", "blocked_reason": reason, "finished_at": now}
            if self._update(workers, still_running, values):
                failed.append(worker_id)
                self._append_recovery_event(worker_id, reason)
        return failed

    def abandon_run(
        self, run_id: str, reason: str, *, status: Literal["failed", "cancelled"] = "failed"
    ) -> list[str]:
        """End a run that will not finish (its flow run crashed on a machine that died, its own
        process failed or was interrupted), with every worker it left pending or running: at
        once, on any machine, instead of after the heartbeat timeout. ``status`` is the run's
        (``cancelled``: interrupted); those workers end failed. ``reason`` is kept on each, and
        on the run as its ``error``. A run that already finished is left alone. Returns the ids
        of the workers ended."""
        now = utcnow()
        failed: list[str] = []
        left = [w for w in self.list_workers(run_id) if w.status in ("pending", "running")]
        wrote = self.posted_writers([w.id for w in left])
        for w in left:
            unfinished = sa.and_(workers.c.id == w.id, workers.c.status.in_(("pending", "running")))
            values: dict[str, object] = {
                "status": "failed",
                "blocked_reason": clean(reason),
                "finished_at": now,
            }
            if w.id in wrote:
                # Its write (a review, a draft) is on GitHub and in the store as posted: the
                # worker did its work, and saying "failed" would tell a person to expect it
                # again. What it left undone after (the summary's edit) is named with it.
                done = f"its write was posted, then it was {reason}"
                if wrote[w.id]:
                    done += f"; {LEFT_AFTER_WRITE}"
                values = {"status": "succeeded", "blocked_reason": clean(done), "finished_at": now}
            if self._update(workers, unfinished, values):
                failed.append(w.id)
                self._append_recovery_event(w.id, reason)
        still_running = sa.and_(swarm_runs.c.id == run_id, swarm_runs.c.status == "running")
        try:
            totals = {**self.get_run(run_id).totals, "error": reason}
        except UnknownRunError:
            return failed
        values = {
            "status": status,
            "finished_at": now,
            "totals": clean_json(totals),
        }
        self._update(swarm_runs, still_running, values)
        return failed

    def posted_writers(self, worker_ids: list[str]) -> dict[str, bool]:
        """Which of ``worker_ids`` hold a posted write key (their review or draft is on
        GitHub), each with whether work after the write (a review's summary) is left undone."""
        if not worker_ids:
            return {}
        with self._db.read() as conn:
            rows = conn.execute(
                sa.select(review_keys.c.worker_id, review_keys.c.unfinished).where(
                    review_keys.c.worker_id.in_(worker_ids), review_keys.c.state == "posted"
                )
            ).all()
        wrote: dict[str, bool] = {}
        for row in rows:
            wrote[str(row.worker_id)] = wrote.get(str(row.worker_id), False) or bool(row.unfinished)
        return wrote

    def _append_recovery_event(self, worker_id: str, reason: str) -> None:
        # Implemented by the transcript mixin; declared here so the recovery path is typed.
        raise NotImplementedError
