"""The result of one swarm run, as plain data: what the flow returns and what the CLI prints.

Nothing in here is secret: worker outcomes carry counts, statuses and links, and bucket
snapshots carry limits and reset times. The same rows feed the Prefect table artifact, the
markdown summary and the CLI's rich table, so the three never disagree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agents.github.writes import WriteTally
from agents.outcome import PLAN_ENDS, WorkerOutcome
from agents.work import WorkWords


class PausedIdentity(BaseModel):
    """An identity whose buckets ran dry during the run, and until when."""

    model_config = ConfigDict(frozen=True)

    identity: str
    paused_until: datetime | None = None
    workers: int = 0


class RunTimings(BaseModel):
    """Where a run's time went. Task-run time minus worker time is Prefect's orchestration."""

    model_config = ConfigDict(frozen=True)

    setup_and_discovery_s: float = 0.0
    dispatch_s: float = 0.0  # minting and sealing, summed over workers
    worker_s: float = 0.0  # inside run_worker, summed over workers
    task_runs_s: float = 0.0  # awaiting the worker task runs, summed over workers
    wall_s: float = 0.0

    @property
    def orchestration_s(self) -> float:
        return max(self.task_runs_s - self.worker_s, 0.0)


class RunReport(BaseModel):
    """Everything a person wants to know after a swarm run."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    role: str
    repos: list[str]
    # How this run speaks of its writes: its role's kind's words (reviews, draft pull requests).
    words: WorkWords = Field(default_factory=WorkWords)
    # Items whose start was refused, and why ("acme/widgets#6: the swarm:implement label was
    # added by bob-dev, who may not write"): nothing ran for them.
    refused: list[str] = Field(default_factory=list)
    dry_run: bool = False
    model: str = "scripted"
    discovered: int = 0
    already_reviewed: int = 0
    drafts_skipped: int = 0
    # Pull requests (or issues) the run was asked for by name that are not open ("acme/widgets#9").
    not_open: list[str] = Field(default_factory=list)
    # PRs ("acme/widgets#3: <reason>") or repositories ("acme/gadgets: cannot list PRs: ...")
    # discovery could not read; retried by the next run.
    unreadable: list[str] = Field(default_factory=list)
    # PRs the repository's .github/swarm.yaml leaves out ("acme/widgets#3: reason: detail").
    skipped: list[str] = Field(default_factory=list)
    # Items discovery left alone for any other reason ("acme/widgets#3@abc1234: already done at
    # this head", a draft, a draft pull request already open), each with its reason.
    left_alone: list[str] = Field(default_factory=list)
    # Invalid .github/swarm.yaml files ("acme/widgets: .github/swarm.yaml:4: ..."); each such
    # repository is skipped until its file is fixed.
    config_errors: list[str] = Field(default_factory=list)
    # PRs this run told about their repository's invalid file (each once per file version).
    config_told: list[str] = Field(default_factory=list)
    outcomes: list[WorkerOutcome] = Field(default_factory=list)
    paused: list[PausedIdentity] = Field(default_factory=list)
    # Per identity: whatever the gateway's snapshot says (limit, remaining, reset, paused until).
    buckets: dict[str, Any] = Field(default_factory=dict)
    store_location: str | None = None
    # The flow run's page in the Prefect UI, filled in by whoever ran the flow and knows its API.
    ui_link: str | None = None
    timings: RunTimings = Field(default_factory=RunTimings)
    # Told before the workers started: PRs, workers, expected tokens and cost.
    estimate: str | None = None
    max_cost_usd: float | None = None
    # PRs (labels) no worker started for because of the cost cap, and the cap's words why.
    left_by_cost_cap: list[str] = Field(default_factory=list)
    cost_cap_reason: str | None = None
    # PRs that end without a full review, and why ("acme/x#3@abc1234: reason"): each gets a
    # note on GitHub once per head (a dry run shows ``note_previews`` instead).
    notes: list[str] = Field(default_factory=list)
    note_previews: dict[str, str] = Field(default_factory=dict)
    # PRs (labels) that carry their review or note although some of their workers did not
    # finish: done at this head, so those workers do not fail the run.
    settled: list[str] = Field(default_factory=list)
    # The run's writes to GitHub by operation and pull request, against the write caps.
    writes: WriteTally = Field(default_factory=WriteTally)

    @property
    def new_reviews(self) -> int:
        """Reviews posted by this run (in a dry run: the reviews it would have posted)."""
        if self.dry_run:
            return sum(1 for o in self.outcomes if o.dry_run_preview)
        return sum(1 for o in self.outcomes if o.posted)

    @property
    def unapproved(self) -> int:
        """Issues whose plan no maintainer approved (plan approval): rejected, not decided on,
        or waiting in another run; failures among them are counted with the failed."""
        return sum(1 for o in self.outcomes if o.status == "skipped" and o.code in PLAN_ENDS)

    @property
    def idempotent_skips(self) -> int:
        """PRs already reviewed at this head SHA: by discovery, or by a worker's own check (not
        those another run's worker holds now: they are not done yet)."""
        done = sum(
            1
            for o in self.outcomes
            if o.status == "skipped" and o.held_by is None and o.code not in PLAN_ENDS
        )
        return self.already_reviewed + done

    @property
    def held_elsewhere(self) -> list[WorkerOutcome]:
        """Workers that stood aside for another run's worker doing the same task now."""
        return [o for o in self.outcomes if o.status == "skipped" and o.held_by is not None]

    @property
    def failed(self) -> list[WorkerOutcome]:
        """Workers that fail the run: blocked or failed on a PR left without review or note."""
        done = set(self.settled)
        return [o for o in self.outcomes if o.failed and o.target not in done]

    @property
    def ok(self) -> bool:
        return not (self.failed or self.unreadable or self.config_errors or self.not_open)

    def headline(self) -> str:
        words = self.words
        verb = f"would be {words.posted}" if self.dry_run else words.posted
        parts = [
            f"{words.count(self.new_reviews)} {verb}",
            f"{self.idempotent_skips} {words.done}",
        ]
        repos = sum(1 for u in self.unreadable if "#" not in u.split(":", 1)[0])
        noted = "would be noted" if self.dry_run else "noted"
        # Work an interrupted run left after its review (the summary), finished by this one: its
        # workers are in the table as succeeded, so the headline says what they did.
        finished = sum(1 for o in self.outcomes if o.finished_summary)
        counted = (
            (finished, "summary(ies) left by an interrupted run written"),
            (len(self.failed), "worker(s) blocked or failed"),
            (len(self.not_open), "named target(s) not open"),
            (len(self.refused), "refused to start"),
            (len(self.held_elsewhere), "being worked on by another run"),
            (self.unapproved, "plan(s) not approved by a maintainer: nothing written"),
            (len(self.unreadable) - repos, "PR(s) could not be read"),
            (repos, "repository(ies) could not be read"),
            (len(self.skipped), "PR(s) skipped by .github/swarm.yaml"),
            (len(self.config_errors), "problem(s) in .github/swarm.yaml files"),
            (len(self.paused), "identity(ies) paused by rate limits"),
            (len(self.left_by_cost_cap), "PR(s) left by the cost cap"),
            (len(self.notes), f"PR(s) {noted} as not reviewed in full"),
            (self.writes.refused, "write(s) refused by the write caps"),
        )
        parts += [f"{n} {what}" for n, what in counted if n]
        return ", ".join(parts)


TABLE_COLUMNS = (
    "worker",
    "role",
    "identity",
    "PR",
    "outcome",
    "GitHub calls",
    "LLM tokens",
    "cache hit %",
    "cost",
    "review",
)


def outcome_row(outcome: WorkerOutcome) -> dict[str, str]:
    """One table row, already formatted, keyed by :data:`TABLE_COLUMNS`."""
    tokens = (
        outcome.input_tokens
        + outcome.output_tokens
        + outcome.cache_read_tokens
        + outcome.cache_write_tokens
    )
    status: str = outcome.status
    if outcome.reason and outcome.status != "succeeded":
        status = f"{status}: {outcome.reason}"
    github = str(outcome.github_calls)
    if outcome.graphql_calls:
        github += f" (+{outcome.graphql_calls} GraphQL)"
    return {
        "worker": outcome.worker_id,
        "role": outcome.role,
        "identity": outcome.identity_login or "-",
        "PR": outcome.target + (f" [{outcome.shard}]" if outcome.shard else ""),
        "outcome": status,
        "GitHub calls": github,
        "LLM tokens": str(tokens),
        "cache hit %": f"{outcome.cache_hit_ratio * 100:.0f}%",
        "cost": f"${outcome.cost_usd:.4f}",
        "review": outcome.review_url or ("(dry run)" if outcome.dry_run_preview else "-"),
    }


# The workers artifact at common widths (at 1,400 px the UI leaves its table under 900 px): what a
# person looks for first (which PR, what it cost, whether its review is there, how it ended) on the
# left, the long links last, where a wide table scrolls.
ARTIFACT_COLUMNS = (
    "PR",
    "role",
    "cost",
    "review",
    "outcome",
    "LLM tokens",
    "cache hit %",
    "GitHub calls",
    "identity",
    "worker",
    "review link",
    "details",
)
OUTCOME_CELL_CHARS = 80


def review_word(outcome: WorkerOutcome) -> str:
    """The review in one word, for a table cell; its link goes elsewhere, whole."""
    if outcome.review_url:
        return "posted" if outcome.posted else "already there"
    return "dry run" if outcome.dry_run_preview else "-"


def artifact_row(outcome: WorkerOutcome, details: str) -> dict[str, str]:
    """One row of the workers artifact, in :data:`ARTIFACT_COLUMNS` order (``details``: the
    worker's own page, where the whole reason is)."""
    row = outcome_row(outcome)
    said = row["outcome"]
    if len(said) > OUTCOME_CELL_CHARS:
        said = said[: OUTCOME_CELL_CHARS - 1] + "…"
    row |= {
        "outcome": said,
        "review": review_word(outcome),
        "review link": outcome.review_url or "-",
        "details": details,
    }
    return {column: row[column] for column in ARTIFACT_COLUMNS}


def ended_line(outcome: WorkerOutcome, of: WorkWords | None = None) -> str:
    """How one worker ended, in a few words, for the run's log and the console; ``of`` names
    its write (its kind's words: a review by default)."""
    of = of or WorkWords()
    words: str = outcome.status
    if outcome.reason:
        # A succeeded worker has a reason only when it did something other than its session
        # (finished what an interrupted run left after its review).
        words += f": {outcome.reason}"
    if outcome.review_url:
        done = of.posted if outcome.posted else "already there"
        words += f"; {of.one} {done}: {outcome.review_url}"
    elif outcome.dry_run_preview:
        words += f"; dry run: a {of.one} would be {of.posted}"
    elif outcome.shard and outcome.status == "succeeded":
        words += f"; {len(outcome.findings)} finding(s) for the summarizer"
    return f"{words} (${outcome.cost_usd:.4f})"


def paused_identities(outcomes: Sequence[WorkerOutcome]) -> list[PausedIdentity]:
    """Identities whose workers ended paused, each with its latest pause and worker count."""
    by_identity: dict[str, PausedIdentity] = {}
    for o in outcomes:
        if o.status != "paused":
            continue
        name = o.identity_login or o.role
        seen = by_identity.get(name)
        until = o.paused_until
        if seen is not None and seen.paused_until and until:
            until = max(until, seen.paused_until)
        by_identity[name] = PausedIdentity(
            identity=name, paused_until=until, workers=(seen.workers if seen else 0) + 1
        )
    return list(by_identity.values())


def markdown_summary(report: RunReport) -> str:
    """The run summary artifact: headline, blocked workers with reasons, paused identities."""
    lines = [
        f"# swarm run `{report.run_id}`",
        "",
        f"**{report.headline()}.**",
        "",
        f"- role: `{report.role}`; model: `{report.model}`"
        + ("; **dry run** (nothing posted)" if report.dry_run else ""),
        f"- repositories: {', '.join(f'`{r}`' for r in report.repos) or '(none)'}",
        f"- open PRs needing work: {report.discovered}; "
        f"skipped as already reviewed: {report.already_reviewed}; "
        f"drafts skipped: {report.drafts_skipped}",
        f"- workers: {len(report.outcomes)}",
    ]
    if report.store_location:
        lines.append(f"- store: `{report.store_location}`")
    if report.estimate:
        lines.append(f"- {report.estimate}")
    if report.left_by_cost_cap:
        lines += ["", f"## Left by the cost cap ({len(report.left_by_cost_cap)} PR(s))", ""]
        lines.append(
            f"No worker started for these: {report.cost_cap_reason}; the next run retries them."
        )
        lines += [f"- {label}" for label in report.left_by_cost_cap]
    lines += _section("Not reviewed in full (a note on each PR, once per head)", report.notes)
    if report.failed:
        lines += ["", "## Blocked or failed workers", ""]
        for o in report.failed:
            lines.append(f"- `{o.worker_id}` {o.target} as {o.role}: **{o.status}**: {o.reason}")
    lines += _section("Asked for by name, but not open", report.not_open)
    lines += _section(
        "PRs or repositories discovery could not read (retried next run)", report.unreadable
    )
    lines += _section(
        "Invalid .github/swarm.yaml (repository skipped until fixed)", report.config_errors
    )
    if report.config_errors and report.config_told:
        lines.append(
            f"- told on the pull requests (once per file version): {', '.join(report.config_told)}"
        )
    lines += _section("Skipped by the repository's .github/swarm.yaml", report.skipped)
    if report.paused:
        lines += ["", "## Paused identities", ""]
        for p in report.paused:
            until = p.paused_until.isoformat() if p.paused_until else "unknown"
            lines.append(f"- `{p.identity}` paused until {until} ({p.workers} worker(s) waiting)")
    if report.writes.counts:
        lines += ["", "## Writes to GitHub (against this run's caps)", "", *write_table(report)]
    if report.buckets:
        lines += ["", "## Rate-limit buckets", "", *bucket_table(report.buckets)]
    previews = [(o.target, o.dry_run_preview) for o in report.outcomes if o.dry_run_preview]
    previews += list(report.note_previews.items())
    if previews:
        lines += ["", "## Would post (dry run)", ""]
        for target, text in previews:
            lines += [f"### {target}", "", "```", text or "", "```", ""]
    return "\n".join(lines) + "\n"


def _section(title: str, items: Sequence[str]) -> list[str]:
    """A summary section listing ``items``, one a line; nothing when there are none."""
    return ["", f"## {title}", "", *(f"- {item}" for item in items)] if items else []


WRITE_COLUMNS = ("operation", "PR", "sent", "refused", "cap per PR")


def write_table(report: RunReport) -> list[str]:
    """The run's writes by operation and PR, beside their caps; refusals named below."""
    writes = report.writes
    lines = ["| " + " | ".join(WRITE_COLUMNS) + " |", "|" + "---|" * len(WRITE_COLUMNS)]
    for c in writes.counts:
        lines.append(f"| {c.operation} | {c.target} | {c.sent} | {c.refused} | {c.cap} |")
    lines += ["", f"{writes.sent} write(s) sent of at most {writes.caps.writes_per_run} a run."]
    if writes.refused:
        lines.append(
            f"**{writes.refused} write(s) refused** and not sent (each a tool error for its "
            "worker's model): raise `SWARM_WRITE_CAPS__<OPERATION>_PER_PR` only if the run "
            "was meant to write that much."
        )
    return lines


def bucket_rows(snapshot: Mapping[str, Any]) -> list[dict[str, str]]:
    """One row per rate-limit bucket of an identity's snapshot (as ``bucket_snapshots`` gives)."""
    paused = snapshot.get("paused_until")
    reason = snapshot.get("pause_reason")
    rows = []
    for name, budget in sorted((snapshot.get("resources") or {}).items()):
        rows.append(
            {
                "bucket": str(name),
                "limit": _cell(budget.get("limit")),
                "remaining": _cell(budget.get("remaining")),
                "used": _cell(budget.get("used")),
                "reset": _cell(budget.get("reset")),
                "paused until": _cell(paused) + (f" ({reason})" if paused and reason else ""),
            }
        )
    if not rows:
        empty = dict.fromkeys(("bucket", "limit", "remaining", "used", "reset"), "-")
        rows.append({**empty, "paused until": _cell(paused)})
    return rows


def _cell(value: object) -> str:
    return "-" if value is None else str(value)


BUCKET_COLUMNS = ("identity", "bucket", "limit", "remaining", "used", "reset", "paused until")


def bucket_table(buckets: Mapping[str, Any]) -> list[str]:
    """Every identity's buckets as one markdown table (it was a Python dict printed as text)."""
    rows = [
        {"identity": f"`{identity}`", **row}
        for identity, snapshot in sorted(buckets.items())
        for row in bucket_rows(snapshot if isinstance(snapshot, Mapping) else {})
    ]
    lines = ["| " + " | ".join(BUCKET_COLUMNS) + " |", "|" + "---|" * len(BUCKET_COLUMNS)]
    for row in rows:
        cells = (str(row.get(column, "-")).replace("|", "\\|") for column in BUCKET_COLUMNS)
        lines.append("| " + " | ".join(cells) + " |")
    return lines
