"""What every tool of one worker shares: its task, its gateway, the store, its buffers."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from agents.llm.context import TierPolicy, tier_for
from agents.memory.operational import AgentMemory
from agents.posting.findings import Finding
from agents.posting.writer import PostedReview
from agents.work import Spend, Task

if TYPE_CHECKING:
    from agents.github.gateway import GitHubGateway
    from agents.github.models import Pull
    from agents.store.store import Store
    from agents.workspace.copy import Workspace
    from agents.writer.bench import WriterBench


class ThreadResolver(Protocol):
    """Resolves review threads (GraphQL node ids) on one repository with a token the worker
    never holds (``agents.identity.resolution``); the ids it resolved."""

    async def __call__(self, repo: str, thread_ids: Sequence[str]) -> set[str]: ...


@dataclass
class WorkerContext:
    """Mutable per-worker state the tools read and fill in; never shared between workers."""

    worker_id: str
    run_id: str
    role_id: str
    task: Task
    gateway: GitHubGateway
    store: Store
    memory: AgentMemory
    permissions: dict[str, str]
    dry_run: bool = False
    history_scope: str = "session"
    # The verified login this worker acts as (whose review markers count is agents.posting.keys').
    bot_login: str | None = None
    # Resolves fixed findings' threads where the operator opted in (None: they get a "fixed
    # at <sha>" reply and stay open).
    resolve_threads: ThreadResolver | None = None
    # Page sizes of the session's context tier (``agents.llm.context``).
    pages: TierPolicy = field(default_factory=lambda: tier_for(200_000))
    # What the worker spent so far (its meter), read when the summary is written.
    spend: Callable[[], Spend] = Spend
    # The writer's working copy, fetched by code; its tools are offered only when there is one.
    workspace: Workspace | None = None
    # The writer's bench (its branch, base, tests and pull request): the writer tools' state.
    bench: WriterBench | None = None
    # Filled in by tools:
    pull: Pull | None = None
    changed_paths: set[str] = field(default_factory=set)
    pull_files: list[dict[str, Any]] | None = None
    # The whole PR's files, and their patches (path -> patch) for anchoring inline comments.
    pr_files: list[dict[str, Any]] | None = None
    pr_patches: dict[str, str | None] | None = None
    review: PostedReview | None = None
    # The review's key was claimed by this worker from nobody: no earlier attempt holds it, so
    # what discovery read this run of the PR's reviews still tells whether it was posted.
    claimed_fresh: bool = False
    summary_url: str | None = None
    submitted: bool = False
    preview: str | None = None
    findings: list[Finding] = field(default_factory=list)
    comments_posted: int = 0
    labels_added: list[str] = field(default_factory=list)
    progress: list[str] = field(default_factory=list)

    @property
    def is_shard(self) -> bool:
        return self.task.shard is not None

    def may(self, permission: str, level: str = "write") -> bool:
        granted = self.permissions.get(permission)
        return granted == "write" or (level == "read" and granted == "read")

    async def guidance_files(self, names: Sequence[str]) -> Mapping[str, str | None]:
        """The repository guidance files (``AGENTS.md``...) for the session, those readable.

        Read at the pull request's **base** commit, never its head: a PR that edits AGENTS.md
        must not write the reviewer's guidance. Issues read the default branch. Guidance is
        optional: a GitHub error leaves it out (our own identity's refusals still end the worker).
        """
        from agents.github.errors import GitHubApiError
        from agents.transport import GitHubUnreachable

        if not self.may("contents", "read"):
            return {}
        try:
            ref = await self._base_sha() if self.task.reviews_pr else None
            if self.task.reviews_pr and ref is None:
                return {}  # no base commit known: no guidance rather than the head's
            # Once per base commit, not per PR: every worker of this identity may read it (the
            # check above), and twenty PRs off one base share one read of them all.
            return await self.gateway.get_files(self.task.repo, names, ref)
        except GitHubApiError as exc:
            if exc.status == 401:
                raise
            return {}
        except GitHubUnreachable:  # our own token's refusal is not caught: it ends the worker
            return {}

    async def _base_sha(self) -> str | None:
        task = self.task
        if task.base_sha or task.number is None:
            return task.base_sha
        if self.pull is None:
            self.pull = await self.gateway.get_pull(task.repo, task.number)
        sha = (self.pull.get("base") or {}).get("sha")
        return sha if isinstance(sha, str) and sha else None
