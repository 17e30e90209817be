"""What every tool of one worker shares: its task, its gateway, the store, its buffers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agents.envelope import TaskRef
from agents.memory.operational import AgentMemory

if TYPE_CHECKING:
    from agents.github.gateway import GitHubGateway
    from agents.store.store import Store


@dataclass
class PostedReview:
    review_id: int | None
    url: str | None
    comments: int
    event: str
    already_posted: bool = False


@dataclass
class WorkerContext:
    """Mutable per-worker state the tools read and fill in; never shared between workers."""

    worker_id: str
    run_id: str
    role_id: str
    task: TaskRef
    gateway: GitHubGateway
    store: Store
    memory: AgentMemory
    permissions: dict[str, str]
    dry_run: bool = False
    history_scope: str = "session"
    # Filled in by tools:
    pull: dict[str, Any] | None = None
    changed_paths: set[str] = field(default_factory=set)
    review: PostedReview | None = None
    preview: str | None = None
    findings: list[dict[str, Any]] = field(default_factory=list)
    comments_posted: int = 0
    labels_added: list[str] = field(default_factory=list)
    progress: list[str] = field(default_factory=list)

    @property
    def is_shard(self) -> bool:
        return self.task.shard_count is not None and self.task.shard_count > 1

    def may(self, permission: str, level: str = "write") -> bool:
        granted = self.permissions.get(permission)
        return granted == "write" or (level == "read" and granted == "read")
