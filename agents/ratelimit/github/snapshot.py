"""What an identity's budget looks like right now: for the Prefect UI, ``swarm limits``, audit."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict

from agents.ratelimit.github.buckets import IdentityState


class ResourceBudget(BaseModel):
    model_config = ConfigDict(frozen=True)

    resource: str
    limit: int | None
    remaining: int | None
    used: int | None
    reset: datetime | None
    in_flight: int


class IdentitySnapshot(BaseModel):
    model_config = ConfigDict(frozen=True)

    identity: str
    taken_at: datetime
    paused_until: datetime | None
    pause_reason: str | None
    resources: dict[str, ResourceBudget]
    in_flight: int
    waiting: int
    rate_limited_responses: int
    requests_by_worker: dict[str, int]


def _dt(epoch: float | None) -> datetime | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, tz=UTC)


def build_snapshot(
    identity: str, state: IdentityState, now: float, waiting: int
) -> IdentitySnapshot:
    resources = {
        name: ResourceBudget(
            resource=name,
            limit=bucket.limit,
            remaining=bucket.remaining,
            used=bucket.used,
            reset=_dt(bucket.reset),
            in_flight=sum(1 for r in state.inflight.values() if r.resource == name),
        )
        for name, bucket in sorted(state.buckets.items())
    }
    paused = state.paused_until > now
    return IdentitySnapshot(
        identity=identity,
        taken_at=datetime.fromtimestamp(now, tz=UTC),
        paused_until=_dt(state.paused_until) if paused else None,
        pause_reason=state.pause_reason if paused else None,
        resources=resources,
        in_flight=len(state.inflight),
        waiting=waiting,
        rate_limited_responses=state.rate_limited_responses,
        requests_by_worker=dict(sorted(state.requests_by_worker.items())),
    )
