"""What a run started from a deployment on a work pool does that a local run does not.

- A schedule tick that finds an earlier top-level run of the same deployment still going ends
  at once as ``Skipped`` (overlap would be safe, only wasteful). A run a person triggers always
  goes ahead: Prefect's ``CANCEL_NEW`` concurrency rule cannot tell the two apart, so the
  deployments carry no concurrency limit and this check does the job.
- The run is renamed after what it covers once the repositories are known: a deployment that
  takes them from ``SWARM_REPOS`` on the worker machine cannot be named from its parameters.
"""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

from prefect import get_client
from prefect.client.schemas.filters import (
    DeploymentFilter,
    DeploymentFilterId,
    FlowRunFilter,
    FlowRunFilterParentTaskRunId,
    FlowRunFilterState,
    FlowRunFilterStateType,
)
from prefect.client.schemas.objects import StateType

# Repositories listed by name in a run's name; the rest are counted.
NAMED_REPOS = 3


def run_name(role: str, repos: Sequence[str], dry_run: bool) -> str:
    shown = ", ".join(repos[:NAMED_REPOS]) or "no repositories"
    if len(repos) > NAMED_REPOS:
        shown += f" and {len(repos) - NAMED_REPOS} more"
    return f"swarm {role} over {shown}" + (" (dry run)" if dry_run else "")


async def scheduled_tick_overlaps(flow_run_id: str, deployment_id: str) -> bool:
    """True when this run came from the schedule and another top-level run of the deployment
    is still running (child runs of a fan-out do not count)."""
    async with get_client() as client:
        me = await client.read_flow_run(UUID(flow_run_id))
        if not me.auto_scheduled or me.parent_task_run_id is not None:
            return False
        running = await client.read_flow_runs(
            deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[UUID(deployment_id)])),
            flow_run_filter=FlowRunFilter(
                state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.RUNNING])),
                parent_task_run_id=FlowRunFilterParentTaskRunId(is_null_=True),
            ),
        )
    return any(run.id != me.id for run in running)


async def rename_run(flow_run_id: str, name: str) -> None:
    async with get_client() as client:
        await client.update_flow_run(UUID(flow_run_id), name=name)
