"""Per-run caps on the bot's writes: how many of each operation one run may make on one pull
request, and how many writes in all.

A worker acts only on its own task's PR and each tool writes once, but a hijacked or runaway
worker (a model steered by the diff, a loop in our own code) must still not be able to spam
people under the bot's name. So the one request path asks the run's :class:`WriteLedger`
before a write goes out. A refused write is never sent: it raises :class:`WriteRefused`, which
a tool hands back to the model as an error result and every other caller takes as GitHub's
refusal; the ledger counts it, and the run report shows every count beside its cap.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt

from agents.github.errors import GitHubApiError
from agents.ratelimit.github.requests import RequestSpec

Operation = Literal[
    "review", "comment", "reply", "edit", "label", "reaction", "resolution", "other"
]
# In the order the report's table lists them: the Literal's own.
OPERATIONS: tuple[Operation, ...] = get_args(Operation)
_PULL = re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/(?:pulls|issues)/(?P<number>\d+)(?:/|$)")
_REPO = re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)")


class WriteCaps(BaseModel):
    """How many writes of each operation one run may make on one pull request or issue, and in
    all. The defaults leave room for what a review does (its summary, the review, a reply and a
    resolution for each thread it closes) and stop what no run needs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    reviews_per_pr: NonNegativeInt = 3
    comments_per_pr: NonNegativeInt = 5
    replies_per_pr: NonNegativeInt = 100
    edits_per_pr: NonNegativeInt = 10
    labels_per_pr: NonNegativeInt = 5
    reactions_per_pr: NonNegativeInt = 10
    resolutions_per_pr: NonNegativeInt = 100
    other_per_pr: NonNegativeInt = 10
    writes_per_run: PositiveInt = 1000

    def per_pr(self, operation: Operation) -> int:
        cap: int = getattr(self, cap_field(operation))
        return cap


def cap_field(operation: Operation) -> str:
    """The :class:`WriteCaps` field of an operation's cap (``reply`` -> ``replies_per_pr``)."""
    # "other" has no plural: its field is ``other_per_pr`` (``others_per_pr`` made every
    # "other" write under a ledger raise AttributeError instead of being counted).
    plural = {"reply": "replies", "other": "other"}.get(operation, f"{operation}s")
    return f"{plural}_per_pr"


class WriteCount(BaseModel):
    """One operation's writes on one pull request in a run: sent, and refused by the cap."""

    model_config = ConfigDict(frozen=True)

    operation: Operation
    target: str  # "acme/widgets#3"
    sent: int = 0
    refused: int = 0
    cap: int = 0


class WriteTally(BaseModel):
    """A run's writes against its caps, for the run report."""

    model_config = ConfigDict(frozen=True)

    caps: WriteCaps = Field(default_factory=WriteCaps)
    counts: list[WriteCount] = Field(default_factory=list)
    # Writes refused because the run's total was reached (whatever their operation).
    refused_by_run_cap: int = 0

    @property
    def sent(self) -> int:
        return sum(c.sent for c in self.counts)

    @property
    def refused(self) -> int:
        return sum(c.refused for c in self.counts)

    def merged(self, other: WriteTally) -> WriteTally:
        """Two runs' tallies as one (a parent run's children)."""
        by_key = {(c.operation, c.target): c for c in self.counts}
        for c in other.counts:
            seen = by_key.get((c.operation, c.target))
            if seen is not None:
                c = c.model_copy(
                    update={"sent": seen.sent + c.sent, "refused": seen.refused + c.refused}
                )
            by_key[(c.operation, c.target)] = c
        return WriteTally(
            caps=self.caps,
            counts=list(by_key.values()),
            refused_by_run_cap=self.refused_by_run_cap + other.refused_by_run_cap,
        )


class WriteRefused(GitHubApiError):
    """A write the run's caps do not allow: nothing was sent. A 429 as far as callers that
    handle GitHub's refusals go; its message says which cap and which setting."""

    def __init__(self, method: str, route: str, message: str) -> None:
        super().__init__(429, method, route, message)

    def __str__(self) -> str:
        return self.message


def operation_of(spec: RequestSpec, body: object) -> Operation | None:
    """The operation a write is, or None for a write that is not the bot's content (minting
    and revoking its own token)."""
    route = spec.route
    if spec.resource == "graphql":
        query = str(body.get("query") or "") if isinstance(body, Mapping) else ""
        return "resolution" if "resolveReviewThread" in query else "other"
    if not route.startswith("/repos"):
        return None
    method = spec.method
    if route.endswith("/reactions"):
        return "reaction"
    if route.endswith("/reviews") and method == "POST":
        return "review"
    if route.endswith("/replies"):
        return "reply"
    if route.endswith("/issues/comments/{comment_id}") and method == "PATCH":
        return "edit"
    if route.endswith("/comments") and method == "POST":
        return "comment"
    if route.endswith(("/labels", "/labels/{name}")):
        return "label"
    return "other"


def target_of(spec: RequestSpec, default: str | None) -> str:
    """The pull request (or issue) a write is about: from its path, else the worker's task."""
    found = _PULL.match(spec.target)
    if found is not None:
        return f"{found['repo']}#{found['number']}"
    if default:
        return default
    repo = _REPO.match(spec.target)
    return repo["repo"] if repo is not None else "-"


class WriteLedger:
    """One run's writes by (operation, pull request), checked against its caps before each one
    is sent. Shared by every gateway of the run (workers run on threads and event loops alike)."""

    def __init__(self, caps: WriteCaps | None = None) -> None:
        self.caps = caps or WriteCaps()
        self._sent: dict[tuple[Operation, str], int] = {}
        self._refused: dict[tuple[Operation, str], int] = {}
        self._total = 0
        self._refused_by_run = 0
        self._lock = threading.Lock()

    def admit(self, spec: RequestSpec, body: object, default_target: str | None) -> None:
        """Count the write, or raise :class:`WriteRefused` (counted too) over a cap."""
        operation = operation_of(spec, body)
        if operation is None:
            return
        key = (operation, target_of(spec, default_target))
        cap = self.caps.per_pr(operation)
        with self._lock:
            if self._total >= self.caps.writes_per_run:
                self._refused[key] = self._refused.get(key, 0) + 1
                self._refused_by_run += 1
                raise WriteRefused(
                    spec.method,
                    spec.route,
                    f"write refused, nothing was sent: this run already made "
                    f"{self.caps.writes_per_run} writes (SWARM_WRITE_CAPS__WRITES_PER_RUN)",
                )
            if self._sent.get(key, 0) >= cap:
                self._refused[key] = self._refused.get(key, 0) + 1
                raise WriteRefused(
                    spec.method,
                    spec.route,
                    f"write refused, nothing was sent: this run may make {cap} {operation} "
                    f"write(s) on {key[1]} and made them "
                    f"(SWARM_WRITE_CAPS__{cap_field(operation).upper()})",
                )
            self._sent[key] = self._sent.get(key, 0) + 1
            self._total += 1

    def tally(self) -> WriteTally:
        with self._lock:
            keys = sorted(set(self._sent) | set(self._refused), key=lambda k: (k[1], k[0]))
            counts = [
                WriteCount(
                    operation=op,
                    target=target,
                    sent=self._sent.get((op, target), 0),
                    refused=self._refused.get((op, target), 0),
                    cap=self.caps.per_pr(op),
                )
                for op, target in keys
            ]
            return WriteTally(
                caps=self.caps, counts=counts, refused_by_run_cap=self._refused_by_run
            )
