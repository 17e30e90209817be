"""A worker's story in a few readable log lines: who it proved to be, what it read, each model
call, each goal, checkpoint and decision, what it posted, and how it ended.

These lines go to the ``agents.worker`` logger; inside a swarm run the flow ships them to the
worker's task-run log (redacted by the handler's filter), so a person watching the Prefect UI
reads them there. Tool payloads are never logged: only our own summaries of them (a path and a
size, a page count), and for the tools whose text is ours (posting, progress) that text.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from agents.llm.turn import ToolResult
from agents.tools.catalog import TOOLS
from agents.worker.ports import ModelTurn, ToolUse

if TYPE_CHECKING:
    from agents.identity.verify import VerifiedIdentity
    from agents.outcome import WorkerOutcome

log = logging.getLogger("agents.worker")

LINE_CHARS = 300


def _short(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1] + "…"


def verified(identity: VerifiedIdentity) -> None:
    permissions = ", ".join(f"{k}:{v}" for k, v in sorted(identity.permissions.items()))
    repos = ", ".join(identity.repositories) or "(all of the installation's)"
    log.info(
        "identity verified: %s (%s); permissions %s; repositories %s",
        identity.login,
        identity.kind,
        permissions or "(none)",
        repos,
    )


def model_call(turn: ModelTurn, number: int) -> None:
    usage = turn.result.usage
    prompt = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    hit = usage.cache_read_input_tokens / prompt if prompt else 0.0
    log.info(
        "LLM call %d (%s): %d prompt tokens (%d cached, %d written to cache, cache hit %.0f%%), "
        "%d output tokens, $%.4f, stop: %s",
        number,
        turn.model,
        prompt,
        usage.cache_read_input_tokens,
        usage.cache_creation_input_tokens,
        hit * 100,
        usage.output_tokens,
        turn.cost_usd,
        turn.result.stop_reason,
    )


def tool_line(use: ToolUse, result: ToolResult) -> str | None:
    """The story line for one tool call, or None when it tells nothing worth a line."""
    if result.is_error:
        return f"{use.name} failed: {_short(result.summary or result.content)}"
    if use.name == "record_progress":
        # A goal, checkpoint or decision: the arguments passed validation, the note is the line.
        return f"{use.args.get('kind', 'checkpoint')}: {_short(str(use.args.get('note', '')))}"
    spec = TOOLS.get(use.name)
    if spec is not None and spec.verb:
        return f"{spec.verb}: {_short(result.summary or '')}"
    if spec is not None and spec.own_text:
        return f"{use.name}: {_short(result.content)}"
    return f"{use.name}: {_short(result.summary or 'done')}"


def tool_called(use: ToolUse, result: ToolResult) -> None:
    line = tool_line(use, result)
    if line is not None:
        log.info("%s", line)


def ended(outcome: WorkerOutcome) -> None:
    # Which findings, not only how many: "3 finding(s) to post" sent a person to the transcript.
    for number, finding in enumerate(outcome.findings, 1):
        where = f"{finding.path}:{finding.line}"
        said = _short(f"{finding.severity} {finding.category}: {finding.message}")
        log.info("finding %d of %d: %s: %s", number, len(outcome.findings), where, said)
    tokens = (
        outcome.input_tokens
        + outcome.output_tokens
        + outcome.cache_read_tokens
        + outcome.cache_write_tokens
    )
    how = outcome.status + (f" ({outcome.reason})" if outcome.reason else "")
    # The link goes last: the UI turns it into a link up to the next space, punctuation included.
    review = f"; review {outcome.review_url}" if outcome.review_url else ""
    log.info(
        "ended %s: %d LLM call(s), %d tokens, cache hit %.0f%%, $%.4f; %d GitHub call(s)%s",
        how,
        outcome.llm_calls,
        tokens,
        outcome.cache_hit_ratio * 100,
        outcome.cost_usd,
        outcome.github_calls + outcome.graphql_calls,
        review,
    )
