"""What a worker reports back to the flow that dispatched it: plain data, nothing secret."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from agents.posting.findings import Finding

# How a worker ended: the one word for it from the session loop to the outcome, the store's
# worker row (agents.store.records adds the words of a worker still under way), the Prefect
# task-run state (flows.run.states), the run report and `swarm runs`.
OutcomeStatus = Literal[
    "succeeded",  # the job is done (review posted, or nothing to post)
    "skipped",  # idempotency: this (PR, head SHA, role) was already reviewed
    "blocked",  # refused to act: envelope, credential or identity problem
    "budget_exhausted",  # a budget (turns, tokens, cost, wall time, GitHub calls) ended it
    "paused",  # its identity or the model key is rate-limited/overloaded until `paused_until`
    "failed",  # an error it could not recover from (GitHub 5xx, model error, crash)
]
OUTCOME_STATUSES: tuple[OutcomeStatus, ...] = get_args(OutcomeStatus)
# The ends that fail the run (its flow run ends FAILED, `swarm run` exits 1). A skipped worker had
# nothing to do; a paused one waits for its identity or key, and a later run picks its work up.
FAILED_OUTCOMES: frozenset[OutcomeStatus] = frozenset({"blocked", "budget_exhausted", "failed"})
# Why a worker ended short of its job, as a code that code decides on (planning reads it to tell
# a review that the same head would end the same way from one that may finish next time); the
# outcome's ``reason`` is the same fact in words, for a person, and is never matched.
EndCode = Literal[
    "turns",  # its turn budget
    "tokens",  # its token budget
    "cost",  # its cost budget
    "github_calls",  # its GitHub-call budget
    "wall_time",  # its wall-time budget
    "context_full",  # the conversation no longer fits the model's window
    "output_limit",  # the model's replies kept hitting the output limit
    "refusal",  # the model refused the task
    "plan_rejected",  # a maintainer rejected the writer's plan twice: nothing written
    "plan_timed_out",  # no maintainer decided on the writer's plan in time: nothing written
    "plan_unapproved",  # approval is required and this run cannot wait for it (no deployment)
]

# The ends of plan approval (agents.writer.approval): nothing written, and nothing done either.
PLAN_ENDS: frozenset[EndCode] = frozenset({"plan_rejected", "plan_timed_out", "plan_unapproved"})


class TestRunLine(BaseModel):
    """One run of the repository's tests by the writer: its command (the base branch's), how it
    ended in a line, and whether it passed (None: not run, the line says why)."""

    model_config = ConfigDict(frozen=True)

    command: str
    line: str
    passed: bool | None


class WrittenWork(BaseModel):
    """What a writer worker changed, for its page in the Prefect UI: the model's plan (its own
    words, redacted), the branch's size against the base, and each test run."""

    model_config = ConfigDict(frozen=True)

    plan: str = ""
    files: int = 0
    additions: int = 0
    deletions: int = 0
    test_runs: list[TestRunLine] = Field(default_factory=list)


class WorkerOutcome(BaseModel):
    """The structured result of one worker, as the parent flow and the UI see it."""

    model_config = ConfigDict(frozen=True)

    worker_id: str
    role: str
    identity_login: str | None = None
    target: str  # e.g. "acme/widgets#12@abc1234"
    # Which part of a sharded review this worker had, e.g. "shard 2/3 (15 files)".
    shard: str | None = None
    status: OutcomeStatus
    reason: str | None = None  # e.g. "BLOCKED: identity mismatch: login is octo-maintainer"
    code: EndCode | None = None  # why it ended short, for code (None: no such end)
    review_url: str | None = None
    posted: bool = False
    dry_run_preview: str | None = None
    github_calls: int = 0
    graphql_calls: int = 0
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    turns: int = 0
    paused_until: datetime | None = None
    # Every finding the model reported (posted, folded or repeated), as it reported it.
    findings: list[Finding] = Field(default_factory=list)
    # A writer's change and test runs (None for the kinds that write no code).
    written: WrittenWork | None = None
    # The worker that holds this task's claim, when this one stood aside for it: the task is
    # being done by another run now, not done already.
    held_by: str | None = None
    # The summary this worker wrote for a review an interrupted run posted and left without
    # one (the worker's only work: no model call).
    finished_summary: str | None = None

    @property
    def cache_hit_ratio(self) -> float:
        prompt = self.input_tokens + self.cache_read_tokens + self.cache_write_tokens
        return self.cache_read_tokens / prompt if prompt else 0.0

    @property
    def failed(self) -> bool:
        """Whether this end fails the run (see :data:`FAILED_OUTCOMES`)."""
        return self.status in FAILED_OUTCOMES


class WorkRefused(Exception):
    """A kind's workbench will not set up the work (a branch that is someone else's, an invalid
    base configuration): the worker ends failed with this one line, before any model call."""


class WorkDone(Exception):
    """A kind's workbench found the task's one write made already (a run cut off before it
    recorded it): the worker ends skipped, naming it at ``url``."""

    def __init__(self, reason: str, url: str) -> None:
        super().__init__(reason)
        self.url = url
