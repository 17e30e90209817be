"""One GitHub call as the audit log sees it: who, what route, what it cost, what came back."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict


class GitHubCallRecord(BaseModel):
    """Never holds a token or a request body; ``target`` is the concrete path without query."""

    model_config = ConfigDict(frozen=True)

    identity: str
    worker_id: str
    method: str
    route: str
    target: str
    status: int | None
    is_write: bool
    is_content_creation: bool
    resource: str
    cost: int
    rate_limit_remaining: int | None
    started_at: float
    duration_ms: float
    waited_ms: float
    attempt: int
    error: str | None = None


CallObserver = Callable[[GitHubCallRecord], None]
