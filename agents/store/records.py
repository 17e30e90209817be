"""Plain read-back rows handed out by the store (frozen dataclasses, no SQLAlchemy objects)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from datetime import datetime
from typing import Literal, get_args

from agents.json_value import JSONObject
from agents.outcome import OutcomeStatus

# A worker row's status: under way, or ended as its outcome says (the same words, paused and
# skipped included; revision 0005 gave the rows written before that their own words back).
WorkerStatus = Literal["pending", "running", OutcomeStatus]
WORKER_STATUSES: tuple[str, ...] = get_args(WorkerStatus)
FINAL_WORKER_STATUSES = frozenset(WORKER_STATUSES) - {"pending", "running"}

# "waiting": the run's flow run is suspended for a maintainer's decision (plan approval); it
# holds no process, and runs again from the start when resumed.
RunStatus = Literal["running", "waiting", "succeeded", "failed", "partial", "cancelled"]
RUN_STATUSES: tuple[str, ...] = get_args(RunStatus)

# A learning is read from feedback on the bot's review comments: quoted, attributed, untrusted.
MemoryKind = Literal["fact", "procedure", "learning"]
MEMORY_KINDS: tuple[str, ...] = get_args(MemoryKind)
MemoryState = Literal["active", "proposed", "rejected"]
MEMORY_STATES: tuple[str, ...] = get_args(MemoryState)
NoteKind = Literal["note", "continuity"]
NOTE_KINDS: tuple[str, ...] = get_args(NoteKind)


@dataclass(frozen=True)
class RunRecord:
    id: str
    trigger: str
    prefect_flow_run_id: str | None
    status: str
    started_at: datetime
    finished_at: datetime | None
    totals: JSONObject


@dataclass(frozen=True)
class WorkerRecord:
    id: str
    run_id: str
    role_chain: list[str]
    identity_login: str | None
    envelope_id: str | None
    envelope_hash: str | None
    token_fingerprint: str | None
    task: JSONObject
    status: str
    blocked_reason: str | None
    budgets_used: dict[str, int | float | str]
    last_seq: int
    heartbeat_at: datetime | None
    pid: int | None
    host: str | None
    started_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True)
class EventRecord:
    worker_id: str
    run_id: str
    seq: int
    kind: str
    content: JSONObject
    search_text: str
    tokens: int
    cost: float
    created_at: datetime

    @property
    def citation(self) -> str:
        return f"worker:{self.worker_id}#{self.seq}"


@dataclass(frozen=True)
class NewWorker:
    """One worker row for :meth:`Store.create_worker`, in run ``run_id``. Who it acts as
    (``identity_login``, ``token_fingerprint``) and the envelope it was sent are known when its
    envelope is sealed; ``pid`` and ``host`` default to this process's; ``worker_id`` to a new
    id."""

    run_id: str
    _: KW_ONLY
    role_chain: Sequence[str]
    task: Mapping[str, object] | None = None
    identity_login: str | None = None
    envelope_id: str | None = None
    envelope_hash: str | None = None
    token_fingerprint: str | None = None
    status: str = "pending"
    pid: int | None = None
    host: str | None = None
    worker_id: str | None = None


@dataclass(frozen=True, kw_only=True)
class WorkerUpdate:
    """What :meth:`Store.update_worker` changes in a worker row: each field left None is kept."""

    status: str | None = None
    blocked_reason: str | None = None
    budgets_used: Mapping[str, int | float | str] | None = None
    identity_login: str | None = None
    token_fingerprint: str | None = None
    pid: int | None = None
    host: str | None = None


@dataclass(frozen=True)
class NewEvent:
    """One event for :meth:`Store.append_events`."""

    kind: str
    content: str | JSONObject
    tokens: int = 0
    cost: float = 0.0


@dataclass(frozen=True, kw_only=True)
class AuditedCall:
    """What the audit log keeps of a GitHub call. ``route`` is the template
    (``/repos/{owner}/{repo}/pulls/{pull_number}/reviews``), ``target`` the concrete object
    (``octo/demo#12``)."""

    identity: str
    worker_id: str | None
    method: str
    route: str
    target: str | None = None
    status: int | None = None
    ratelimit_remaining: int | None = None


@dataclass(frozen=True, kw_only=True)
class GitHubCall(AuditedCall):
    """One GitHub call for :meth:`Store.record_github_call`. ``mutation`` None: "the method is
    POST/PUT/PATCH/DELETE"; False for a GraphQL query (a POST that changes nothing), True for a
    GraphQL mutation."""

    resource: str | None = None
    latency_ms: int | None = None
    mutation: bool | None = None


@dataclass(frozen=True, kw_only=True)
class AuditRecord(AuditedCall):
    at: datetime


@dataclass(frozen=True, kw_only=True)
class LlmCall:
    """One model call for :meth:`Store.record_llm_call`. ``cache_miss`` None: "a cacheable prefix
    was sent but nothing was read from the cache"."""

    worker_id: str | None
    model: str
    prefix_hash: str | None
    role_chain: list[str]
    input_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    output_tokens: int
    cost: float
    latency_ms: int
    stop_reason: str | None
    cache_miss: bool | None = None
    memory_hash: str | None = None


@dataclass(frozen=True, kw_only=True)
class LlmCallRecord(LlmCall):
    cache_miss: bool
    at: datetime


@dataclass(frozen=True)
class RateLimitRecord:
    identity: str
    resource: str
    limit: int | None
    remaining: int | None
    reset_at: datetime | None
    paused_until: datetime | None
    by_worker: JSONObject
    at: datetime


@dataclass(frozen=True)
class ReviewKeyRecord:
    key: str
    worker_id: str
    state: str
    review_id: int | None
    review_url: str | None
    at: datetime
    unfinished: JSONObject | None = None


@dataclass(frozen=True)
class MemoryRecord:
    id: int
    kind: str
    repo: str | None
    role: str | None
    body: str
    author: str
    author_kind: str
    run_id: str | None
    created_at: datetime
    supersedes: int | None
    superseded_by: int | None
    deleted_at: datetime | None
    deleted_by: str | None
    state: str = "active"
    worker_id: str | None = None
    pr_number: int | None = None
    source: JSONObject | None = None
    source_key: str | None = None

    @property
    def active(self) -> bool:
        """Not superseded and not deleted (a proposal is live too, but no worker sees it)."""
        return self.superseded_by is None and self.deleted_at is None


@dataclass(frozen=True)
class NoteRecord:
    id: int
    worker_id: str
    run_id: str | None
    repo: str | None
    role: str | None
    kind: str
    body: str
    created_at: datetime
    pr_number: int | None = None


@dataclass(frozen=True)
class PruneCounts:
    transcript_events: int = 0
    llm_calls: int = 0
    github_calls: int = 0
    rate_limit_snapshots: int = 0

    @property
    def total(self) -> int:
        return (
            self.transcript_events + self.llm_calls + self.github_calls + self.rate_limit_snapshots
        )


@dataclass(frozen=True, kw_only=True)
class NewDelivery:
    """One webhook delivery for :meth:`Store.record_delivery`, as its headers and payload name
    it; ``outcome`` "ignored" with the reason in ``detail`` when no work follows."""

    delivery_id: str
    body_sha256: str
    event: str
    action: str | None = None
    repo: str | None = None
    number: int | None = None
    sender: str | None = None
    outcome: str = "received"
    detail: str | None = None
    # What it asks for (its routed work, plain data), and the receiver that claims it, until
    # when: the row is that work's place in the receiver's queue.
    work: JSONObject | None = None
    claimed_by: str | None = None
    claimed_until: datetime | None = None


@dataclass(frozen=True)
class DeliveryEnd:
    """What became of a delivery's work, for :meth:`Store.finish_delivery`: enqueued (with its
    flow run), running, done, ignored, refused or failed. ``detail`` None keeps what the row
    said; ``flow_state`` is the flow run's final state; ``handed_over``: the flow run is
    Prefect's to run (a deployment's), no longer this receiver's to finish."""

    outcome: str
    detail: str | None = None
    flow_run_id: str | None = None
    flow_state: str | None = None
    handed_over: bool = False


@dataclass(frozen=True, kw_only=True)
class DeliveryRecord(NewDelivery):
    flow_run_id: str | None
    received_at: datetime
    finished_at: datetime | None
    attempts: int = 0
    flow_state: str | None = None
