"""The unit of work: one ``Task`` from discovery to the worker, and the ``Assignment`` of a role.

Discovery finds tasks, planning assigns each to a role (splitting a large pull request into
shards), the dispatcher seals the task into the envelope unchanged, and the worker reads it from
there. Every field is public: it travels in clear text as part of a Prefect task parameter.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agents.posting.findings import Finding, Severity

# Quiet by default: nits fold into the summary, and at most ten comments go inline.
DEFAULT_MIN_SEVERITY: Severity = "minor"
DEFAULT_MAX_COMMENTS = 10
MAX_INLINE = 50

TaskKind = Literal["review_pr", "summarize", "triage_issue", "respond", "implement", "fix"]


class Shard(BaseModel):
    """Part ``index`` (from 0) of ``count``: the worker reviews only its task's ``files`` and
    hands its findings to the summarizer instead of posting."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int = Field(ge=0)
    count: int = Field(ge=2)


class ListedFile(BaseModel):
    """A changed file the review names but does not read in full, and why (a generated or
    vendored file, no patch from GitHub, a shard that did not finish...)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    reason: str


class Spend(BaseModel):
    """What workers spent: dollars, tokens in (cache reads and writes included) and out, calls."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cost_usd: float = Field(default=0.0, ge=0)
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    model_calls: int = Field(default=0, ge=0)

    def plus(self, other: Spend) -> Spend:
        return Spend(
            cost_usd=self.cost_usd + other.cost_usd,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            model_calls=self.model_calls + other.model_calls,
        )


class WorkWords(BaseModel):
    """How a run's report speaks of its kind's work (:attr:`agents.kinds.kind.Kind.words`): what
    one write is called and its plural, the verb for writing it, and what an item already done
    is. The review kinds' words are the defaults."""

    model_config = ConfigDict(frozen=True)

    one: str = "review"
    many: str = "reviews"
    posted: str = "posted"
    done: str = "already reviewed at this head SHA"
    of: str = "of"  # "review of acme/widgets#3", "draft pull request for acme/widgets#6"
    items: str = "PR(s) to review"  # what a run found to work on

    def count(self, n: int) -> str:
        return f"{n} new {self.one if n == 1 else self.many}"


class RepoRules(BaseModel):
    """The repository's own rules for a task, from its ``.github/swarm.yaml`` at the default
    branch, as one value: what the planner read is what the worker and its posting obey.

    ``guidance``: its instructions, shown to the model as delimited data, never as a system
    block; ``language``: the review language it asks for (checked by the configuration
    schema); ``min_severity`` and ``max_comments``: its noise settings (``review:``), findings
    below the one and beyond the other fold into the summary by count; ``approval_timeout_s``:
    the writer's plan waits this long for a maintainer's approval before anything is written
    (``writer.approval``; None: the repository asks for no approval)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    guidance: str = ""
    language: str | None = Field(default=None, pattern=r"^[A-Za-z][A-Za-z ()-]{1,39}$")
    min_severity: Severity = DEFAULT_MIN_SEVERITY
    max_comments: int = Field(default=DEFAULT_MAX_COMMENTS, ge=0, le=MAX_INLINE)
    approval_timeout_s: int | None = Field(default=None, ge=1)


class Task(BaseModel):
    """What one worker is asked to do, e.g. review ``acme/widgets#12`` at head ``abc1234``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: TaskKind
    repo: str
    number: int | None = Field(default=None, gt=0)
    head_sha: str | None = None
    base_sha: str | None = None
    # Re-review: only what changed since this previously reviewed head.
    since_sha: str | None = None
    # The files this task reads in full (all of a PR's, or one shard's).
    files: tuple[str, ...] = ()
    # The PR's files it names but reads only as an excerpt on request, each with its reason;
    # the posted review lists them, so no file name escapes a person's eyes.
    listed: tuple[ListedFile, ...] = ()
    shard: Shard | None = None
    # Trusted dispatcher text for the task, e.g. the shard findings a summarizer merges.
    brief: str = ""
    # The repository's rules (guidance, language, noise settings), read by the planner.
    rules: RepoRules = RepoRules()
    # A forced re-review at an already reviewed head: its id makes a second review key.
    rerun: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]{1,64}$")
    # A person's reply (its review comment id) in a thread the bot started, to answer.
    reply_to: int | None = Field(default=None, gt=0)
    # What the shards a summarizer merges spent (the summary's cost line counts them too).
    spent_before: Spend = Spend()
    # The review at this head is posted and what follows it (the summary) is not: a run was
    # interrupted in between. One worker of the role that posted it finishes it, unsharded.
    finishing: bool = False
    # A fix round (agents.kinds.fix): the reviewer bots whose finding markers count (their
    # logins, verified by discovery).
    reviewers: tuple[str, ...] = ()
    # What earlier workers of this same task spent against the role's caps (a fix round's
    # earlier rounds on the pull request): the dispatcher grants only what is left.
    budget_spent: Spend = Spend()
    # Plan approval (agents.writer.approval): a writer session that only plans (it reads, and
    # proposes a plan; nothing is written), and the plan a maintainer approved for the session
    # that writes, or the rejected plan with their note for the one that plans again. Set by
    # the flow's gate, never by the text.
    planning: bool = False
    guidance: str = ""

    @field_validator("repo")
    @classmethod
    def _owner_name(cls, value: str) -> str:
        owner, _, name = value.partition("/")
        if not owner or not name or "/" in name:
            raise ValueError(f"{value!r} is not OWNER/NAME")
        return value

    # What :attr:`part_label` reads: a stored task row is read back through these alone.
    label_fields: ClassVar[tuple[str, ...]] = (
        "kind",
        "repo",
        "number",
        "head_sha",
        "shard",
        "reply_to",
    )

    @property
    def label(self) -> str:
        """How people read the target: ``acme/widgets#12@abc1234``."""
        target = self.repo if self.number is None else f"{self.repo}#{self.number}"
        return f"{target}@{self.head_sha[:7]}" if self.head_sha else target

    @property
    def part_label(self) -> str:
        """The label and which part of the target the task is: ``acme/widgets#12@abc1234
        [shard 2/3]``, ``... [reply 77]``. Where a run lists its workers, each shard of one PR
        (or each reply in one PR) is a line of its own, not the same line again."""
        part = f" [shard {self.shard.index + 1}/{self.shard.count}]" if self.shard else ""
        if self.reply_to is not None:
            part += f" [reply {self.reply_to}]"
        return self.label + part

    @property
    def reviews_pr(self) -> bool:
        """The task ends in one review of a pull request (posted by it, unless a shard)."""
        return self.kind in ("review_pr", "summarize")

    def with_findings(self, findings: Sequence[Finding], spent: Spend | None = None) -> Task:
        """The summarizer's task, carrying its shards' findings as its brief, and what they
        spent."""
        update: dict[str, object] = {"brief": render_findings(findings)}
        if spent is not None:
            update["spent_before"] = spent
        return self.model_copy(update=update)


_TARGET = re.compile(r"^(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)#(?P<number>[1-9][0-9]{0,9})$")


def parse_target(text: str) -> tuple[str, int]:
    """``OWNER/NAME#N`` as (repo, number); ValueError naming the expected form."""
    found = _TARGET.match(text.strip())
    if found is None:
        raise ValueError(f"{text!r} is not OWNER/NAME#NUMBER")
    return found["repo"], int(found["number"])


def render_findings(findings: Sequence[Finding]) -> str:
    """Shard findings as one JSON object a line, in the report tool's own schema (the
    summarizer's input: it reports them again, merged)."""
    return "\n".join(
        json.dumps(f.model_dump(exclude_none=True), ensure_ascii=True, sort_keys=True)
        for f in findings
    )


class Assignment(BaseModel):
    """One worker to dispatch: which role does which task."""

    model_config = ConfigDict(frozen=True)

    role: str
    task: Task
    # The tokens its plan expects it to spend (0: unknown); its token budget follows from it.
    expected_tokens: int = 0

    @property
    def run_name(self) -> str:
        """The task run name people read in the Prefect UI."""
        verbs = {
            "summarize": "summarize",
            "triage_issue": "triage",
            "respond": "answer",
            "implement": "implement",
            "fix": "fix",
        }
        verb = "plan" if self.task.planning else verbs.get(self.task.kind, "review")
        return f"{verb} {self.task.part_label} as {self.role}"
