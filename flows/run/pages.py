"""What the Prefect UI shows of each worker and identity, besides the logs: one markdown artifact
per worker (findings, review link, cost and budget use) and one table artifact per identity (its
rate-limit buckets). The formatting is plain functions; ``publish_*`` create the artifacts.

Artifact keys may hold only lowercase letters, digits and dashes, so each is built from the
repository, the PR and the role (and the shard): the same worker of a later run adds a new
version under the same key, and the UI's artifact page shows how it went run after run.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from agents.dispatch.envelope import Budgets
from agents.outcome import WorkerOutcome, WrittenWork
from agents.redact import redact
from agents.work import Assignment, WorkWords
from flows.run.report import bucket_rows

KEY_CHARS = 100
# The plan shown on a writer's page: its gist, not a document (the pull request holds it whole).
PLAN_CHARS = 2_000


def artifact_key(*parts: str) -> str:
    """``("swarm", "acme/widgets#1", "reviewer")`` -> ``swarm-acme-widgets-1-reviewer``."""
    key = re.sub(r"[^a-z0-9]+", "-", "-".join(parts).lower()).strip("-")
    return key[:KEY_CHARS].rstrip("-")


def worker_key(assignment: Assignment) -> str:
    task = assignment.task
    target = task.repo if task.number is None else f"{task.repo}-{task.number}"
    shard = task.shard
    part = f"shard-{shard.index + 1}-of-{shard.count}" if shard else ""
    return artifact_key("swarm", target, assignment.role, part)


def identity_key(identity: str) -> str:
    return artifact_key("swarm", "identity", identity)


def ui_link(artifact_id: uuid.UUID | None) -> str | None:
    """The artifact's page in the Prefect UI, when the API has one (not under the harness)."""
    from prefect.settings import get_current_settings

    base = get_current_settings().ui_url
    if artifact_id is None or not base:
        return None
    return f"{base.rstrip('/')}/artifacts/artifact/{artifact_id}"


def _spent(used: float, limit: float, fmt: str) -> str:
    share = f" ({100 * used / limit:.0f}%)" if limit else ""
    return f"{fmt.format(used)} of {fmt.format(limit)}{share}"


def worker_markdown(
    outcome: WorkerOutcome, title: str, budgets: Budgets | None, words: WorkWords | None = None
) -> str:
    """One worker's page: how it ended, its write (``words`` name it: a review by default),
    a writer's change and test runs, findings, cost and budget use."""
    tokens = (
        outcome.input_tokens
        + outcome.output_tokens
        + outcome.cache_read_tokens
        + outcome.cache_write_tokens
    )
    ended = f"**{outcome.status}**" + (f": {outcome.reason}" if outcome.reason else "")
    lines = [
        f"# {title}",
        "",
        ended,
        "",
        f"- worker: `{outcome.worker_id}`; identity: `{outcome.identity_login or '-'}`",
        f"- target: `{outcome.target}`",
    ]
    if outcome.review_url:
        of = words or WorkWords()
        verb = of.posted if outcome.posted else "already there"
        lines.append(f"- {of.one} ({verb}): [{outcome.review_url}]({outcome.review_url})")
    elif outcome.dry_run_preview:
        lines.append("- dry run: nothing posted")
    if outcome.written is not None:
        lines += written_section(outcome.written)
    lines += ["", "## Findings", ""]
    if outcome.findings:
        for f in outcome.findings:
            message = " ".join(f.message.split())
            lines.append(f"- `{f.path}:{f.line}` ({f.severity}, {f.category}): {message}")
    else:
        lines.append("- none")
    lines += ["", "## Cost and budget use", ""]
    calls = outcome.github_calls + outcome.graphql_calls
    hit = f"(cache hit {outcome.cache_hit_ratio * 100:.0f}%)"
    if budgets is not None:
        lines += [
            f"- cost: {_spent(outcome.cost_usd, budgets.cost_usd, '${:.4f}')}",
            f"- LLM calls: {_spent(outcome.llm_calls, budgets.turns, '{:.0f}')}",
            f"- tokens: {_spent(tokens, budgets.llm_tokens, '{:.0f}')} {hit}",
            f"- GitHub calls: {_spent(calls, budgets.github_calls, '{:.0f}')}",
        ]
    else:
        lines += [
            f"- cost: ${outcome.cost_usd:.4f}",
            f"- LLM calls: {outcome.llm_calls}; tokens: {tokens} {hit}",
            f"- GitHub calls: {calls}",
        ]
    return redact("\n".join(lines) + "\n")


_VERDICT = {True: "passed", False: "failed", None: "not run"}


def written_section(written: WrittenWork) -> list[str]:
    """A writer's page: its plan (the model's words, quoted as text, never as markup), the
    branch's size against the base, and each run of the repository's tests."""
    lines = ["", "## The change", ""]
    size = f"{written.files} file(s), +{written.additions} -{written.deletions}"
    lines.append(f"- size against the base: {size}")
    if written.plan:
        plan = written.plan[:PLAN_CHARS].replace("`", "'")
        lines += ["- plan (the model's words):", "", "```text", plan, "```"]
    lines += ["", "## Test runs", ""]
    if not written.test_runs:
        lines.append("- none")
    for run in written.test_runs:
        command = run.command.replace("`", "'") or "-"
        lines.append(f"- **{_VERDICT[run.passed]}**: {run.line} (`{command}`)")
    return lines


async def publish_worker(
    assignment: Assignment,
    outcome: WorkerOutcome,
    budgets: Budgets | None,
    words: WorkWords | None = None,
) -> uuid.UUID:
    """The worker's markdown artifact, attached to the task run it is created in."""
    from prefect.artifacts import acreate_markdown_artifact

    return await acreate_markdown_artifact(
        markdown=worker_markdown(outcome, assignment.run_name, budgets, words),
        key=worker_key(assignment),
        description=redact(f"{assignment.run_name}: {outcome.status}"),
    )


async def publish_identities(buckets: Mapping[str, Any]) -> None:
    """One table artifact per identity the run used: its buckets at the end of the run."""
    from prefect.artifacts import acreate_table_artifact

    for identity, snapshot in sorted(buckets.items()):
        paused = snapshot.get("paused_until") if isinstance(snapshot, Mapping) else None
        await acreate_table_artifact(
            table=bucket_rows(snapshot if isinstance(snapshot, Mapping) else {}),
            key=identity_key(identity),
            description=f"Rate-limit buckets of {identity}"
            + (f": paused until {paused}" if paused else ""),
        )


def workers_section(pages: Sequence[tuple[WorkerOutcome, str]]) -> str:
    """The summary's list of worker pages: a link where the UI has one, else the artifact key."""
    if not pages:
        return ""
    lines = ["", "## Workers", ""]
    for outcome, page in pages:
        shard = f" [{outcome.shard}]" if outcome.shard else ""
        name = f"{outcome.target}{shard} as {outcome.role}: {outcome.status}"
        shown = f"[{name}]({page})" if page.startswith("http") else f"{name} (artifact `{page}`)"
        lines.append(f"- {shown}")
    return "\n".join(lines) + "\n"
