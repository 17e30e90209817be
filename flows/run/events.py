"""Prefect events for what a team wants to be told about, so Automations can notify on them.

One event per worker that posted a review, was blocked, found its identity paused or spent a
budget. The worker is the event's resource; its repository, pull request and identity are
related resources (and so are the flow run and task run it belongs to), so an automation can
match "any blocked worker on acme/widgets" or "anything about swarm-reviewer[bot]". Payloads
carry reasons and links only, redacted; never a credential.
"""

from __future__ import annotations

import logging
from typing import Any

from agents.outcome import WorkerOutcome
from agents.redact import redact_obj
from agents.work import Assignment
from flows.run.pages import worker_key

log = logging.getLogger("flows.run.events")

REVIEW_POSTED = "swarm.review.posted"
WORKER_BLOCKED = "swarm.worker.blocked"
IDENTITY_PAUSED = "swarm.identity.paused"
BUDGET_EXHAUSTED = "swarm.worker.budget-exhausted"
EVENT_NAMES = (REVIEW_POSTED, WORKER_BLOCKED, IDENTITY_PAUSED, BUDGET_EXHAUSTED)

# The resource id prefixes automations match on (``swarm.repository.acme/widgets``).
REPOSITORY = "swarm.repository."
PULL_REQUEST = "swarm.pull-request."
IDENTITY = "swarm.identity."
WORKER = "swarm.worker."


def event_name(outcome: WorkerOutcome) -> str | None:
    """Which event a worker's outcome is worth, if any."""
    if outcome.status == "succeeded" and outcome.posted:
        return REVIEW_POSTED
    return {
        "blocked": WORKER_BLOCKED,
        "paused": IDENTITY_PAUSED,
        "budget_exhausted": BUDGET_EXHAUSTED,
    }.get(outcome.status)


def _run_resources() -> list[dict[str, str]]:
    """The flow run and task run this event happened in, as Prefect names them."""
    from prefect.runtime import flow_run, task_run

    related = []
    for kind, run_id in (("flow-run", flow_run.id), ("task-run", task_run.id)):
        if run_id:
            related.append(
                {"prefect.resource.id": f"prefect.{kind}.{run_id}", "prefect.resource.role": kind}
            )
    return related


def event_for(assignment: Assignment, outcome: WorkerOutcome) -> dict[str, Any] | None:
    """The keyword arguments of ``emit_event`` for this outcome, or None when it is routine."""
    name = event_name(outcome)
    if name is None:
        return None
    task = assignment.task
    identity = outcome.identity_login or f"role:{assignment.role}"
    related = [
        {
            "prefect.resource.id": f"{REPOSITORY}{task.repo}",
            "prefect.resource.role": "repository",
            "prefect.resource.name": task.repo,
        },
        {
            "prefect.resource.id": f"{IDENTITY}{identity}",
            "prefect.resource.role": "identity",
            "prefect.resource.name": identity,
        },
    ]
    if task.number is not None:
        pr = f"{task.repo}#{task.number}"
        related.insert(
            1,
            {
                "prefect.resource.id": f"{PULL_REQUEST}{pr}",
                "prefect.resource.role": "pull-request",
                "prefect.resource.name": pr,
            },
        )
    payload: dict[str, Any] = {
        "target": outcome.target,
        "role": outcome.role,
        "status": outcome.status,
        "reason": outcome.reason,
        "review_url": outcome.review_url,
        "paused_until": outcome.paused_until.isoformat() if outcome.paused_until else None,
        "cost_usd": outcome.cost_usd,
    }
    # A worker refused at dispatch has no id yet: its page's key names it.
    worker = outcome.worker_id if outcome.worker_id != "-" else worker_key(assignment)
    return {
        "event": name,
        "resource": {
            "prefect.resource.id": f"{WORKER}{worker}",
            "prefect.resource.name": assignment.run_name,
            "swarm.role": assignment.role,
        },
        "related": related + _run_resources(),
        "payload": redact_obj({k: v for k, v in payload.items() if v is not None}),
    }


def emit_for(assignment: Assignment, outcome: WorkerOutcome) -> None:
    """Emit the outcome's event, if it has one. Never fails the worker over an event."""
    kwargs = event_for(assignment, outcome)
    if kwargs is None:
        return
    from prefect.events import emit_event

    try:
        emit_event(**kwargs)
    except Exception as exc:  # an event too large or a broken client must not end the run
        log.warning("could not emit %s: %s", kwargs["event"], type(exc).__name__)
